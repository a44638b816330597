"""Transfer costs as the planners estimate them (the executor measures the real ones)."""

from dataclasses import dataclass


__all__ = ["TransferCosts"]


@dataclass(frozen=True)
class TransferCosts:
    read_s_per_byte: float        # flash → HBM, sustained (link and flash in series)
    write_s_per_byte: float       # HBM → flash
    read_latency_s: float         # fixed cost of one planned prefetch
    write_latency_s: float        # fixed cost of one planned write-out (a program)
    flash_latency_s: float        # one flash page read (G10's "SSD latency")
    system_latency_s: float       # G10's "system latency"

    @classmethod
    def of(cls, tier, flash):
        return cls(read_s_per_byte=1 / min(tier.link_bytes_per_s, flash.read_bytes_per_s),
                   write_s_per_byte=1 / min(tier.link_bytes_per_s, flash.program_bytes_per_s),
                   read_latency_s=tier.request_overhead_s + flash.read_latency_s,
                   write_latency_s=tier.request_overhead_s + flash.program_latency_s,
                   flash_latency_s=flash.read_latency_s,
                   system_latency_s=tier.fault_latency_s)
