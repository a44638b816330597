"""The passage of a configuration to a testbench.

A testbench runs in the simulator's own process; it learns the configuration its design
was built with from the environment (:func:`config_environment` on the launching side,
:func:`config_from_environment` in the testbench).
"""

from dataclasses import asdict, fields, is_dataclass
import json
import os
import typing

from matndp.hw.config import NDPConfig


__all__ = ["CONFIG_VARIABLE", "config_environment", "config_from_environment", "config_from_json"]


CONFIG_VARIABLE = "MATNDP_CONFIG"


def config_environment(config):
    """The environment that hands ``config`` to a testbench."""
    if not isinstance(config, NDPConfig):
        raise TypeError(f"expected an NDPConfig, not {config!r}")
    return {CONFIG_VARIABLE: json.dumps(asdict(config), sort_keys=True)}


def _build(cls, values, where):
    if not isinstance(values, dict):
        raise ValueError(f"{where}: expected an object of {cls.__name__} parameters, not {values!r}")
    known = {item.name for item in fields(cls)}
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"{where}: {cls.__name__} has no parameter(s) {', '.join(sorted(unknown))}")
    types = typing.get_type_hints(cls)
    arguments = {}
    for name, value in values.items():
        # A field typed ``SomeConfig | None`` holds a configuration or None.
        kinds = [kind for kind in typing.get_args(types[name]) or (types[name],)
                 if is_dataclass(kind)]
        if kinds and value is not None:
            arguments[name] = _build(kinds[0], value, f"{where}.{name}")
        else:
            arguments[name] = value
    return cls(**arguments)


def config_from_json(text, where=CONFIG_VARIABLE):
    """The :class:`NDPConfig` that :func:`config_environment` serialized; validated as
    any configuration a user builds."""
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: not JSON ({error})") from None
    return _build(NDPConfig, values, where)


def config_from_environment(default=None):
    """The configuration the launching side put in the environment, or ``default`` (the
    default configuration when that is None)."""
    text = os.environ.get(CONFIG_VARIABLE)
    if text is None:
        return default or NDPConfig()
    return config_from_json(text)
