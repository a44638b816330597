"""Tier configuration: HBM capacity, the optional host-DRAM tier, the GPU's link, demand
paging (fault latency, fault batches), overheads, energies and costs."""

import numbers
from dataclasses import dataclass


__all__ = ["TierConfig"]


@dataclass(frozen=True)
class TierConfig:
    """Everything about the two tiers except the flash device (see :mod:`host.tier.flash`)
    and the HBM access energy (shared with the rest of the host model: :mod:`host.energy`).

    Exactly one of ``hbm_bytes`` (absolute) and ``hbm_fraction`` (of the iteration's peak
    footprint with everything resident) sets the HBM capacity. ``host_bytes`` > 0 puts a
    host-DRAM tier between HBM and flash (evicted pages go there while it has room); 0 is
    the two-tier system. The GPU's link (``link_bytes_per_s`` per direction) carries every
    transfer into or out of HBM, from host DRAM or flash alike; ``link_duplex`` says
    whether its two directions run at once (PCIe does) or share one queue.
    """

    hbm_bytes: int | None = None
    hbm_fraction: float | None = None
    # Migration granularity between tiers: 4 KiB pages, as G10's UVM model.
    page_bytes: int = 4096
    # HBM↔flash link: PCIe 4.0 ×16, 31.5 GB/s per direction.
    link_bytes_per_s: float = 31.5e9
    # Software cost of one planned DMA transfer (command submission and completion);
    # an assumption of the order of an NVMe round trip.
    request_overhead_s: float = 5e-6
    # Demand-paging fault handling (G10's "system latency").
    fault_latency_s: float = 45e-6
    # PCIe-class link, 6.5 pJ/bit: NVLink-C2C's 1.3 pJ/bit is quoted as 5x better than PCIe Gen 5.
    link_j_per_byte: float = 8 * 6.5e-12
    # HBM3E contract price, analyst estimates of $8-10/GB (secondary); the midpoint.
    hbm_cost_usd_per_gb: float = 9.0
    # Host DRAM behind the GPU's link: capacity, bandwidth (eight DDR5-4800 channels,
    # 307 GB/s, an assumption for a server socket) and the latency of one access across
    # the link (G10's PCIe latency).
    host_bytes: int = 0
    host_bytes_per_s: float = 307.2e9
    host_latency_s: float = 5e-6
    host_cost_usd_per_gb: float = 3.0
    link_duplex: bool = True
    # UVM services faults in batches (G10's setup: 50 pages).
    fault_batch_pages: int = 50
    # A full host DRAM moves its least recently used pages on to flash to take new
    # evictions (demand-paging policies); false: evictions go straight to flash instead,
    # as G10's simulator does once host memory is full.
    host_demotes: bool = True

    def __post_init__(self):
        if (self.hbm_bytes is None) == (self.hbm_fraction is None):
            raise ValueError("tier: give exactly one of hbm_bytes and hbm_fraction")
        if self.hbm_fraction is not None and not self.hbm_fraction > 0:
            raise ValueError(f"tier: HBM fraction must be > 0, got {self.hbm_fraction}")
        if self.hbm_bytes is not None and not self.hbm_bytes > 0:
            raise ValueError(f"tier: HBM capacity must be > 0 bytes, got {self.hbm_bytes}")
        # A whole number written as a float (40e9) is a capacity; a fraction of a byte is not.
        if self.hbm_bytes is not None and not (
                isinstance(self.hbm_bytes, numbers.Integral) and not isinstance(self.hbm_bytes, bool)
                or isinstance(self.hbm_bytes, float) and self.hbm_bytes.is_integer()):
            raise ValueError(f"tier: HBM capacity must be a whole number of bytes, got {self.hbm_bytes!r}")
        if not isinstance(self.page_bytes, int) or self.page_bytes < 512:
            raise ValueError(f"tier: page_bytes must be an integer >= 512, got {self.page_bytes!r}")
        for name in ("link_bytes_per_s", "host_bytes_per_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"tier: {name} must be positive")
        if not isinstance(self.host_bytes, int) or self.host_bytes < 0:
            raise ValueError(f"tier: host_bytes must be an integer >= 0, got {self.host_bytes!r}")
        if not isinstance(self.fault_batch_pages, int) or self.fault_batch_pages < 1:
            raise ValueError("tier: fault_batch_pages must be an integer >= 1, got "
                             f"{self.fault_batch_pages!r}")
        if not isinstance(self.host_demotes, bool):
            raise ValueError(f"tier: host_demotes must be true or false, got {self.host_demotes!r}")
        if not isinstance(self.link_duplex, bool):
            raise ValueError(f"tier: link_duplex must be true or false, got {self.link_duplex!r}")
        for name in ("request_overhead_s", "fault_latency_s", "link_j_per_byte",
                     "hbm_cost_usd_per_gb", "host_latency_s", "host_cost_usd_per_gb"):
            if getattr(self, name) < 0:
                raise ValueError(f"tier: {name} must not be negative")

    @property
    def host_pages(self):
        return self.host_bytes // self.page_bytes

    def capacity_bytes(self, footprint_bytes):
        if self.hbm_bytes is not None:
            return int(self.hbm_bytes)
        return int(self.hbm_fraction * footprint_bytes)
