"""The one configuration object of the RTL. Every width and depth comes from here.

:class:`NDPConfig` holds what every block of a slice shares (the ports' address, data and id
widths) and composes one configuration per block (:class:`TriggerConfig` today). A user
builds one ``NDPConfig`` and it is validated once, block configurations included.
"""

from dataclasses import dataclass, field, fields


__all__ = ["TriggerConfig", "NDPConfig"]


def _is_power_of_two(value):
    return value > 0 and value & (value - 1) == 0


def _check_ints(config):
    for item in fields(config):
        value = getattr(config, item.name)
        if item.type is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise TypeError(f"{type(config).__name__}.{item.name} must be an int, not {value!r}")


def _check_range(config, name, low, high):
    value = getattr(config, name)
    if not low <= value <= high:
        raise ValueError(f"{type(config).__name__}.{name} must be in {low}..{high}, not {value}")


@dataclass(frozen=True)
class TriggerConfig:
    """The memory-access trigger.

    filter_entries:    address ranges the trigger watches.
    event_queue_depth: trigger events buffered per source (writes, read responses) before
                       the GPU side is back-pressured.
    """

    filter_entries: int = 16
    event_queue_depth: int = 8

    def __post_init__(self):
        _check_ints(self)
        _check_range(self, "filter_entries", 1, 64)
        _check_range(self, "event_queue_depth", 2, 1024)

    @property
    def entry_bits(self):
        """Bits of an entry index."""
        return max(1, (self.filter_entries - 1).bit_length())


@dataclass(frozen=True)
class NDPConfig:
    """Parameters of one NDP slice (one GPU memory channel).

    addr_width:    GPU physical address bits.
    sector_bytes:  bytes per memory request (one L2 sector).
    id_width:      request tag bits; a tag is unique among a channel's outstanding reads.
    counter_width: width of hit and stall counters (wrap-around).
    trigger:       the trigger's parameters (:class:`TriggerConfig`).
    """

    addr_width: int = 40
    sector_bytes: int = 32
    id_width: int = 8
    counter_width: int = 32
    trigger: TriggerConfig = field(default_factory=TriggerConfig)

    def __post_init__(self):
        _check_ints(self)
        if not isinstance(self.trigger, TriggerConfig):
            raise TypeError(f"NDPConfig.trigger must be a TriggerConfig, not {self.trigger!r}")
        _check_range(self, "addr_width", 16, 64)
        if not _is_power_of_two(self.sector_bytes) or not 4 <= self.sector_bytes <= 128:
            raise ValueError(f"NDPConfig.sector_bytes must be a power of two in 4..128, "
                             f"not {self.sector_bytes}")
        _check_range(self, "id_width", 1, 12)
        _check_range(self, "counter_width", 8, 32)

    @property
    def data_width(self):
        return self.sector_bytes * 8

    @property
    def offset_bits(self):
        """Address bits below one sector."""
        return (self.sector_bytes - 1).bit_length()
