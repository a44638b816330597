"""The interface of a point function: what one point of a sweep runs.

A :class:`PointFunction` has a ``name`` (what a specification's ``point`` says), the
:class:`Parameter` list it takes (each with a default and a check of its values), and
``run(config, seed) -> dict``: results as plain data. Implementations register by name in
:data:`matndp.sim.sweep.registry.POINT_FUNCTIONS`; the runners call them through
:meth:`PointFunction.__call__`, which makes the results plain JSON data or refuses them.
"""

from dataclasses import dataclass
import math
from typing import Callable, ClassVar

import numpy as np


__all__ = ["REQUIRED", "Parameter", "PointFunction", "plain", "integer", "number", "boolean",
           "one_of", "optional", "table"]


class _Required:
    def __repr__(self):
        return "REQUIRED"


# The default of a parameter every specification must give.
REQUIRED = _Required()


@dataclass(frozen=True)
class Parameter:
    """One parameter of a point function. ``check(value)`` returns a message saying what
    is wrong with ``value``, or None."""

    name: str
    default: object
    check: Callable
    help: str


class PointFunction:
    """A named function of one configuration (a dict of its parameters) and a seed."""

    name: ClassVar[str]
    help: ClassVar[str]
    parameters: ClassVar[tuple]
    # Numeric results the summary plot shows, in order.
    headline: ClassVar[tuple]

    def parameter(self, key):
        for parameter in self.parameters:
            if parameter.name == key:
                return parameter
        return None

    def check(self, key, value, *, where):
        """Raise :class:`SpecError` (``where`` first) if ``key`` is no parameter or
        ``value`` is not a value of it."""
        from matndp.sim.sweep.spec import SpecError
        parameter = self.parameter(key)
        if parameter is None:
            raise SpecError(f"{where}: {self.name} has no parameter {key!r}; its parameters: "
                            f"{', '.join(p.name for p in self.parameters)}")
        problem = parameter.check(value)
        if problem:
            raise SpecError(f"{where}: {problem}")

    def configuration(self, values):
        """The full configuration: every parameter in declaration order, ``values`` over
        the defaults."""
        from matndp.sim.sweep.spec import SpecError
        config = {}
        for parameter in self.parameters:
            value = values.get(parameter.name, parameter.default)
            if value is REQUIRED:
                raise SpecError(f"{parameter.name}: required by point function {self.name}; "
                                f"give it under [fixed] or [axes]")
            config[parameter.name] = value
        return config

    def check_configuration(self, config):
        """A message saying why the whole ``config`` cannot run (one parameter against
        another), or None."""
        return None

    def run(self, config, seed):
        raise NotImplementedError

    def __call__(self, config, seed):
        return plain(self.run(config, seed))


def plain(value, where="results"):
    """``value`` as JSON data (dicts with string keys, lists, strings, finite or infinite
    numbers, booleans, None); numpy scalars and arrays are converted, anything else is a
    ``TypeError`` naming where it is."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, np.generic):
        return plain(value.item(), where)
    if isinstance(value, np.ndarray):
        return plain(value.tolist(), where)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: key {key!r} is not a string")
            out[key] = plain(item, f"{where}.{key}")
        return out
    if isinstance(value, (list, tuple)):
        return [plain(item, f"{where}[{index}]") for index, item in enumerate(value)]
    raise TypeError(f"{where}: {type(value).__name__} is not plain data")


# Checks: each returns a check, a function value -> message or None. ------------------------

def integer(minimum, maximum=None):
    bounds = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"

    def check(value):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum or \
                (maximum is not None and value > maximum):
            return f"must be an integer {bounds}, not {value!r}"
        return None
    return check


def number(*, above=0.0, at_most=None):
    bounds = f"> {above:g}" + ("" if at_most is None else f" and <= {at_most:g}")

    def check(value):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or not value > above or \
                (at_most is not None and value > at_most):
            return f"must be a number {bounds}, not {value!r}"
        return None
    return check


def boolean(value):
    return None if isinstance(value, bool) else f"must be true or false, not {value!r}"


def one_of(registry_or_names, kind=None):
    """A name registered in a :class:`matndp.host.registry.Registry`, or one of a tuple."""
    def check(value):
        if isinstance(value, str) and value in registry_or_names:
            return None
        if hasattr(registry_or_names, "unknown"):
            return str(registry_or_names.unknown(value))
        return f"unknown {kind} {value!r}; known: {', '.join(registry_or_names)}"
    return check


def optional(check):
    """``check``, or the value None (which TOML cannot write: the parameter left out)."""
    return lambda value: None if value is None else check(value)


def table(value):
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        return f"must be a table, not {value!r}"
    return None
