"""Parameters of the FPGA top that the slice does not have (the slice's own come from its
:class:`~matndp.hw.config.NDPConfig`)."""

from dataclasses import dataclass, fields

from ..config import NDPConfig


__all__ = ["AXIConfig", "checked_configs"]


@dataclass(frozen=True)
class AXIConfig:
    """The AXI side of the FPGA top.

    id_width:     AXI id bits of the GPU-side slave (``s_axi``); the memory side's ids
                  are the slice's (:attr:`~matndp.hw.config.NDPConfig.mem_id_width`).
    read_slots:   sector reads in flight on the GPU side, each holding its place in AXI's
                  response order until its beat has left on R (a power of two, at most the
                  slice's read tags, ``2 ** NDPConfig.id_width``).
    write_bursts: write bursts accepted and not yet answered on B.
    """

    id_width: int = 8
    read_slots: int = 32
    write_bursts: int = 8

    def __post_init__(self):
        for item in fields(self):
            value = getattr(self, item.name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"AXIConfig.{item.name} must be an int, not {value!r}")
        if not 1 <= self.id_width <= 16:
            raise ValueError(f"AXIConfig.id_width must be in 1..16, not {self.id_width}")
        if self.read_slots < 2 or self.read_slots & (self.read_slots - 1):
            raise ValueError(f"AXIConfig.read_slots must be a power of two of at least 2, "
                             f"not {self.read_slots}")
        if not 2 <= self.write_bursts <= 256:
            raise ValueError(f"AXIConfig.write_bursts must be in 2..256, not {self.write_bursts}")

    @property
    def slot_bits(self):
        return (self.read_slots - 1).bit_length()

    def check(self, config):
        """Refuse a slice configuration this top cannot carry, naming both."""
        if self.read_slots > 1 << config.id_width:
            raise ValueError(f"AXIConfig.read_slots ({self.read_slots}) exceeds the "
                             f"{1 << config.id_width} read tags of NDPConfig.id_width "
                             f"({config.id_width})")


def checked_configs(top, config, axi_config):
    """The configurations of the FPGA top named ``top``: ``config`` (an
    :class:`~matndp.hw.config.NDPConfig`) and ``axi_config`` (an :class:`AXIConfig`, the
    default for None), or the error that names what is wrong with them."""
    if not isinstance(config, NDPConfig):
        raise TypeError(f"{top}: config must be an NDPConfig, not {config!r}")
    axi_config = AXIConfig() if axi_config is None else axi_config
    if not isinstance(axi_config, AXIConfig):
        raise TypeError(f"{top}: axi_config must be an AXIConfig, not {axi_config!r}")
    axi_config.check(config)
    return config, axi_config
