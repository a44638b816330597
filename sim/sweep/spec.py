"""A sweep specification: which point function, its fixed parameters, the axes whose
cartesian product gives the points, and the seeds each point runs with.

A specification is a TOML file::

    point = "gpu"                         # a registered point function (see points.py)
    seeds = [1, 2]                        # optional: every point runs once per seed

    [fixed]                               # parameters every point shares
    gpu = "a100"

    [axes]                                # one value list per swept parameter
    model = ["resnet50", "bert-base"]
    batch = { from = 8, to = 64, times = 2 }      # 8, 16, 32, 64
    ndp_slices_per_controller = { from = 1, to = 4, step = 1 }

An axis is a list, or a range ``{from, to}`` with exactly one of ``step`` (arithmetic),
``times`` (geometric) or ``count`` (evenly spaced, floats); ``to`` is included when the
progression reaches it. Every key is checked against the point function's parameters and
every value by that parameter's check, before any point runs: a bad specification raises
:class:`SpecError` naming the key.
"""

from dataclasses import dataclass
import hashlib
import itertools
import json
import math
import pathlib
import tomllib


__all__ = ["SpecError", "Point", "SweepSpec", "load_spec", "parse_spec", "point_key",
           "canonical_json"]


class SpecError(ValueError):
    """A sweep specification that cannot run; the message names the key."""


_TOP_LEVEL = ("point", "seeds", "fixed", "axes")
_RANGE_KEYS = {"from", "to", "step", "times", "count"}
# A range longer than this is almost certainly a typo (a step of 1 over a byte count), and
# so is a sweep of more points (each runs a model for seconds or minutes).
MAX_AXIS_VALUES = 100_000
MAX_POINTS = 100_000


def canonical_json(value):
    """The one text of ``value`` that its hash is taken of: sorted keys, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def point_key(point, config, seed):
    """A stable name of one point: the hash of its point function, full configuration
    (defaults included) and seed. Equal points have equal keys in any run, process or
    machine; it is what resumption matches finished lines by."""
    text = canonical_json({"point": point, "config": config, "seed": seed})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Point:
    """One point of a sweep: the full configuration of its point function and its seed."""

    function: str
    config: dict
    seed: int | None

    @property
    def key(self):
        return point_key(self.function, self.config, self.seed)


@dataclass(frozen=True)
class SweepSpec:
    """A parsed specification. ``axes`` keeps the file's order (the first axis is the
    x axis of the summary plots); ``source`` names the file for messages."""

    function: str
    fixed: dict
    axes: dict
    seeds: tuple
    source: str = "<spec>"

    def configurations(self):
        """(the axis values, the full configuration) of every combination of the axes:
        defaults, then fixed parameters, then one value of each axis; the last axis
        varies fastest."""
        from matndp.sim.sweep.registry import POINT_FUNCTIONS
        function = POINT_FUNCTIONS[self.function]
        names = list(self.axes)
        for values in itertools.product(*self.axes.values()):
            at = dict(zip(names, values))
            yield at, function.configuration({**self.fixed, **at})

    def points(self):
        """Every point, in :meth:`configurations` order, seeds fastest of all."""
        for _, config in self.configurations():
            for seed in self.seeds:
                yield Point(self.function, config, seed)

    def __len__(self):
        return math.prod(len(values) for values in self.axes.values()) * len(self.seeds)


def load_spec(path):
    """Read and check the specification in the TOML file ``path``."""
    path = pathlib.Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise SpecError(f"{path}: no such sweep specification") from None
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a UTF-8 text file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{path}: not TOML ({error})") from None
    return parse_spec(data, source=str(path))


def parse_spec(data, source="<spec>"):
    """Check the specification ``data`` (as TOML parses it) and return a
    :class:`SweepSpec`."""
    from matndp.sim.sweep.registry import POINT_FUNCTIONS

    def fail(key, message):
        raise SpecError(f"{source}: {key}: {message}")

    if not isinstance(data, dict):
        raise SpecError(f"{source}: a specification is a table of {', '.join(_TOP_LEVEL)}, "
                        f"not {data!r}")
    unknown = [key for key in data if key not in _TOP_LEVEL]
    if unknown:
        fail(_shown(unknown[0]), f"unknown key; a specification has {', '.join(_TOP_LEVEL)}")
    if "point" not in data:
        fail("point", f"missing; name a point function ({', '.join(POINT_FUNCTIONS)})")
    name = data["point"]
    if not isinstance(name, str) or name not in POINT_FUNCTIONS:
        fail("point", str(POINT_FUNCTIONS.unknown(name)))
    function = POINT_FUNCTIONS[name]

    fixed = data.get("fixed", {})
    axes_data = data.get("axes", {})
    for key, table in (("fixed", fixed), ("axes", axes_data)):
        if not isinstance(table, dict):
            fail(key, f"must be a table, not {table!r}")
    both = sorted(set(fixed) & set(axes_data))
    if both:
        fail(f"axes.{_shown(both[0])}", "is also fixed; give a parameter either a fixed value or an axis")

    for key, value in fixed.items():
        function.check(key, value, where=f"{source}: fixed.{_shown(key)}")
    axes = {}
    for key, value in axes_data.items():
        where = f"axes.{_shown(key)}"
        if function.parameter(key) is None:
            function.check(key, None, where=f"{source}: {where}")
        values = _axis_values(value, lambda message: fail(where, message))
        for index, item in enumerate(values):
            function.check(key, item, where=f"{source}: {where}[{index}]")
        axes[key] = tuple(values)

    seeds = data.get("seeds")
    if seeds is None:
        seeds = (None,)
    else:
        seeds = tuple(_axis_values(seeds, lambda message: fail("seeds", message)))
        for seed in seeds:
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                fail("seeds", f"a seed must be an integer >= 0, not {seed!r}")
    spec = SweepSpec(name, dict(fixed), axes, seeds, source)
    if len(spec) > MAX_POINTS:
        raise SpecError(f"{source}: {len(spec)} points (more than {MAX_POINTS}); are the "
                        f"axes and seeds right?")
    # Checks that need a whole configuration (one parameter against another), on every
    # point, so that none fails for a reason the specification could have shown.
    try:
        configurations = list(spec.configurations())
    except SpecError as error:           # a required parameter left out
        raise SpecError(f"{source}: {error}") from None
    for at, config in configurations:
        problem = function.check_configuration(config)
        if problem:
            where = ", ".join(f"{key}={value!r}" for key, value in at.items())
            raise SpecError(f"{source}: {problem}" + (f" (at {where})" if where else ""))
    return spec


def _shown(key):
    """A key of the file's as a message shows it: quoted when it holds control characters
    (a line break), so that the message stays one line."""
    return key if key.isprintable() else repr(key)


def _axis_values(value, fail):
    if isinstance(value, list):
        if not value:
            fail("is empty; an axis needs at least one value")
        try:
            texts = {canonical_json(item) for item in value}
        except (TypeError, ValueError) as error:     # a TOML date, an infinity
            fail(f"holds a value that is not plain data ({error})")
        if len(texts) != len(value):
            fail(f"repeats a value: {value!r}")
        return list(value)
    if isinstance(value, dict):
        return _range_values(value, fail)
    fail(f"must be a list of values or a range {{from, to, step|times|count}}, not {value!r}")


def _range_values(table, fail):
    unknown = sorted(set(table) - _RANGE_KEYS)
    if unknown:
        fail(f"unknown range key {unknown[0]!r}; a range has from, to and one of step, times, count")
    for key in ("from", "to"):
        if key not in table:
            fail(f"a range needs {key!r}")
        if isinstance(table[key], bool) or not isinstance(table[key], (int, float)) or \
                (isinstance(table[key], float) and not math.isfinite(table[key])):
            fail(f"range {key!r} must be a finite number, not {table[key]!r}")
    kinds = [key for key in ("step", "times", "count") if key in table]
    if len(kinds) != 1:
        fail("a range needs exactly one of step, times, count")
    kind, start, stop = kinds[0], table["from"], table["to"]
    by = table[kind]
    if isinstance(by, bool) or not isinstance(by, (int, float)) or \
            (isinstance(by, float) and not math.isfinite(by)):
        fail(f"range {kind!r} must be a number, not {by!r}")
    if kind == "count":
        if not isinstance(by, int) or by < 1:
            fail(f"range 'count' must be an integer >= 1, not {by!r}")
        if by > MAX_AXIS_VALUES:
            fail(f"a range of {by} values (more than {MAX_AXIS_VALUES}); is the count right?")
        if by == 1:
            return [start]
        return [start + (stop - start) * i / (by - 1) for i in range(by)]
    if kind == "step":
        if by == 0 or (stop - start) * by < 0:
            fail(f"step {by!r} does not lead from {start!r} to {stop!r}")
        steps = _quotient(stop - start, by)
        make = lambda i: start + i * by
    else:
        if not (start > 0 and stop >= start and by > 1):
            fail(f"a geometric range needs 0 < from <= to and times > 1, not from {start!r}, "
                 f"to {stop!r}, times {by!r}")
        steps = math.log(_quotient(stop, start)) / math.log(by)
        make = lambda i: start * by ** i
    # The span of a range of finite numbers can still be beyond any float (from -1e308
    # to 1e308), and then no integer counts its values.
    count = math.floor(steps + 1e-9) + 1 if math.isfinite(steps) else math.inf
    if count > MAX_AXIS_VALUES:
        fail(f"a range of {count} values (more than {MAX_AXIS_VALUES}); is the {kind} right?")
    values = [make(i) for i in range(count)]
    if all(isinstance(item, int) for item in (start, stop, by)):
        return [int(value) for value in values]
    return values


def _quotient(a, b):
    """``a / b``, or infinity where integers too large for a float make it overflow."""
    try:
        return a / b
    except OverflowError:
        return math.inf
