"""What an offload plan holds: the placements, the overlapped schedule and its traffic."""

import math
from dataclasses import dataclass, field
from typing import NamedTuple


__all__ = ["ScheduledOp", "Busy", "BandwidthSegment", "Plan"]


@dataclass(frozen=True)
class ScheduledOp:
    """One op in the matNDP schedule: where it ran (its placement's name), when, and the
    DRAM bytes it moved."""

    op: str
    kind: str
    phase: str
    where: str                 # the placement's registered name
    start_s: float
    end_s: float
    dram_bytes: int


class Busy(NamedTuple):
    """A GPU kernel or a standalone NDP work item (named by its root op) running."""

    start_s: float
    end_s: float
    op: str


class BandwidthSegment(NamedTuple):
    """DRAM bandwidth drawn from ``start_s`` to ``end_s``: by GPU kernels (with the NDP
    kernels riding on them) and by standalone NDP work."""

    start_s: float
    end_s: float
    gpu_bps: float
    ndp_bps: float


@dataclass
class Plan:
    """The result of :func:`~matndp.host.offload.plan_offload`: the placement of every op,
    the matNDP schedule and the baseline timeline, busy intervals, DRAM bandwidth over
    time, bytes, NDP cycles and instructions, and the memory placement (where the tensors
    and the NDP sit); ``baseline_s``, ``matndp_s`` and ``speedup`` summarize it."""

    graph: object
    gpu: object
    calibration: object
    placements: dict                       # op name -> Placement
    schedule: list                         # ScheduledOp per op, graph order
    gpu_busy: list                         # Busy per GPU kernel
    ndp_busy: list                         # Busy per standalone NDP work item
    bandwidth: list                        # BandwidthSegment, in time order
    baseline: list                         # gpu.TimelineEntry per op
    dram_bytes_gpu: int = 0
    dram_bytes_ndp: int = 0
    ndp_cycles: float = 0.0                # slice cycles of all NDP kernels (both phases)
    ndp_instructions: float = 0.0          # instructions the slices issue for them
    meta: dict = field(default_factory=dict)
    memory: object = None                  # the MemoryPlacement the plan was made in

    @property
    def baseline_s(self):
        return self.baseline[-1].end_s if self.baseline else 0.0

    @property
    def matndp_s(self):
        return max((entry.end_s for entry in self.schedule), default=0.0)

    @property
    def speedup(self):
        return self.baseline_s / self.matndp_s if self.matndp_s > 0 else 1.0

    @property
    def offloaded(self):
        return [name for name, p in self.placements.items() if p.offloaded]

    @property
    def offloaded_share(self):
        """Fraction of the baseline time spent in ops matNDP offloads."""
        offloaded = set(self.offloaded)
        time = sum(e.duration_s for e in self.baseline if e.op in offloaded)
        return time / self.baseline_s if self.baseline_s > 0 else 0.0

    @property
    def amdahl_bound(self):
        share = self.offloaded_share
        return math.inf if share >= 1 else 1.0 / (1.0 - share)

    @property
    def dram_bytes_baseline(self):
        return sum(e.bytes for e in self.baseline)

    @property
    def dram_bytes_matndp(self):
        return self.dram_bytes_gpu + self.dram_bytes_ndp
