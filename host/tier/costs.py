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
        """Costs of the tier evictions go to first: host DRAM when there is one (as G10's
        planner rates a move to host memory), flash otherwise."""
        if tier.host_bytes:
            per_byte = 1 / min(tier.link_bytes_per_s, tier.host_bytes_per_s)
            return cls(read_s_per_byte=per_byte, write_s_per_byte=per_byte,
                       read_latency_s=tier.request_overhead_s + tier.host_latency_s,
                       write_latency_s=tier.request_overhead_s + tier.host_latency_s,
                       flash_latency_s=0.0, system_latency_s=tier.fault_latency_s)
        return cls(read_s_per_byte=1 / min(tier.link_bytes_per_s, flash.read_bytes_per_s),
                   write_s_per_byte=1 / min(tier.link_bytes_per_s, flash.program_bytes_per_s),
                   read_latency_s=tier.request_overhead_s + flash.read_latency_s,
                   write_latency_s=tier.request_overhead_s + flash.program_latency_s,
                   flash_latency_s=flash.read_latency_s,
                   system_latency_s=tier.fault_latency_s)
