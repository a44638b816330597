"""The one configuration object of the RTL. Every width and depth comes from here."""

from dataclasses import dataclass, fields


__all__ = ["NDPConfig"]


def _is_power_of_two(value):
    return value > 0 and value & (value - 1) == 0


@dataclass(frozen=True)
class NDPConfig:
    """Parameters of one NDP slice (one GPU memory channel).

    addr_width:        GPU physical address bits.
    sector_bytes:      bytes per memory request (one L2 sector).
    id_width:          request tag bits; a tag is unique among a channel's outstanding reads.
    filter_entries:    address ranges the trigger watches.
    event_queue_depth: trigger events buffered per source (writes, read responses) before
                       the GPU side is back-pressured.
    counter_width:     width of hit and stall counters (wrap-around).
    """

    addr_width: int = 40
    sector_bytes: int = 32
    id_width: int = 8
    filter_entries: int = 16
    event_queue_depth: int = 8
    counter_width: int = 32

    def __post_init__(self):
        for field in fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"NDPConfig.{field.name} must be an int, not {value!r}")
        if not 16 <= self.addr_width <= 64:
            raise ValueError(f"addr_width must be in 16..64, not {self.addr_width}")
        if not _is_power_of_two(self.sector_bytes) or not 4 <= self.sector_bytes <= 128:
            raise ValueError(f"sector_bytes must be a power of two in 4..128, not {self.sector_bytes}")
        if not 1 <= self.id_width <= 12:
            raise ValueError(f"id_width must be in 1..12, not {self.id_width}")
        if not 1 <= self.filter_entries <= 64:
            raise ValueError(f"filter_entries must be in 1..64, not {self.filter_entries}")
        if not 2 <= self.event_queue_depth <= 1024:
            raise ValueError(f"event_queue_depth must be in 2..1024, not {self.event_queue_depth}")
        if not 8 <= self.counter_width <= 32:
            raise ValueError(f"counter_width must be in 8..32, not {self.counter_width}")

    @property
    def data_width(self):
        return self.sector_bytes * 8

    @property
    def offset_bits(self):
        """Address bits below one sector."""
        return (self.sector_bytes - 1).bit_length()

    @property
    def entry_bits(self):
        return max(1, (self.filter_entries - 1).bit_length())
