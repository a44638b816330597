"""The base of the engine's components: a configuration checked before the component
exists.

Checking in ``__new__`` rather than ``__init__`` means a refused argument leaves no
half-built component behind to be reported as never elaborated. A component with
arguments of its own checks them in :meth:`EngineComponent.check_arguments`.
"""

from amaranth.lib import wiring

from ..config import NDPConfig


__all__ = ["EngineComponent", "SubCoreComponent", "check_engine_config", "check_positive"]


def check_engine_config(config):
    """Refuse (``TypeError``) anything but an :class:`~..config.NDPConfig` with an engine."""
    if not isinstance(config, NDPConfig) or config.engine is None:
        raise TypeError(f"config must be an NDPConfig with an engine, not {config!r}")


def check_positive(name, value):
    """Refuse (``ValueError``) anything but a positive int as argument ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")


class EngineComponent(wiring.Component):
    """A component whose first argument is the slice's :class:`~..config.NDPConfig`."""

    def __new__(cls, config, *args, **kwargs):
        check_engine_config(config)
        cls.check_arguments(config, *args, **kwargs)
        return super().__new__(cls)

    @classmethod
    def check_arguments(cls, config, *args, **kwargs):
        """Refuse the arguments after ``config`` that this component cannot take."""


class SubCoreComponent(EngineComponent):
    """A part of sub-core ``index`` (0 … ``sub_cores`` − 1)."""

    @classmethod
    def check_arguments(cls, config, index=0):
        if isinstance(index, bool) or not isinstance(index, int) or \
                not 0 <= index < config.engine.sub_cores:
            raise ValueError(f"index must be a sub-core of the {config.engine.sub_cores} "
                             f"(0..{config.engine.sub_cores - 1}), not {index!r}")
