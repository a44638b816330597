"""G10's GPUDirect-storage variants (G10-GDS-SSD and G10-GDS-FULL, Zhang et al., MICRO
2023) as G10's artifact runs them: G10's plan executed by whole-tensor transfers without
UVM underneath.

The plan is ``g10``'s (:mod:`.g10`), then G10's final pass for GDS: while the planned GPU
memory at its fullest slot is at least 0.9 × the GPU's, the idle gaps not yet used that
span that slot, longest first (idle time × size), are evicted to the SSD right after the
use that opens them, with no prefetch: the tensor is read back when its next op needs it.
G10-GDS-SSD has no host memory (every transfer goes to the SSD); G10-GDS-FULL places each
gap on the SSD or host memory as ``g10`` does. Without UVM a missing tensor is a direct
read, not a page fault (no fault latency).

Left out: G10's GDS simulator gives the GPU four times its memory ("the memory limit is
applied at planning time") and times host transfers at the link's bandwidth less the
SSD's; ours holds the GPU to its capacity (what the plan leaves is met by the executor's
eviction) and host transfers cross the whole link.
"""

from dataclasses import replace

import numpy as np

from ..costs import TransferCosts
from ..plan import Chunk, Plan, ring_add
from .g10 import G10Policy, plan_g10
from .registry import register_policy


__all__ = ["G10GDSSSDPolicy", "G10GDSFullPolicy", "gds_final_pass"]

# G10's final GDS pass stops once the fullest slot is below this share of GPU memory.
GDS_TARGET = 0.9


def gds_final_pass(plan, lifetimes, slot_times):
    """``plan`` with G10's final GDS evictions added (the module's docstring)."""
    n = lifetimes.n_ops
    times = np.asarray(slot_times, dtype=float)
    occupancy = lifetimes.base_occupancy.astype(np.int64).copy()
    used = set()
    for chunk in plan.chunks:
        ring_add(occupancy, chunk.evict_due, chunk.fetch_at, -chunk.pages)
        used.add((chunk.tensor, chunk.gap_after))
    hill = int(np.argmax(occupancy))
    hill_pages = int(occupancy[hill])
    start = np.concatenate([[0.0], np.cumsum(times)])
    gaps = [g for g in lifetimes.gaps if g.before < n and (g.tensor, g.after) not in used]
    gaps.sort(key=lambda g: -(start[g.before] - start[g.after + 1]) * lifetimes.pages[g.tensor])
    chunks = list(plan.chunks)
    for gap in gaps:
        if hill_pages < GDS_TARGET * plan.capacity_pages:
            break
        if not gap.after < hill < gap.before:
            continue
        pages = int(lifetimes.pages[gap.tensor])
        chunks.append(Chunk(gap.tensor, pages, gap.after, gap.after + 1, gap.after + 1,
                            gap.before, gap.before, destination="flash"))
        hill_pages -= pages
    return replace(plan, chunks=tuple(chunks))


class _G10GDSPolicy(G10Policy):
    """G10's plan plus the final GDS pass, run without UVM's fault latency; ``host``:
    whether host memory is used."""

    host = True

    def plan(self, context):
        tier, flash = context.tier, context.flash
        if self.host and tier.host_bytes:
            planned = super().plan(context)
        else:
            planned = plan_g10(context.lifetimes, context.op_times, context.capacity_pages,
                               TransferCosts.of(replace(tier, host_bytes=0), flash), self.config)
        return replace(gds_final_pass(planned, context.lifetimes, context.op_times),
                       policy=self.name)

    def executor(self, lifetimes, op_times, capacity_pages, tier, flash_config, *,
                 initial_resident, log):
        tier = replace(tier, fault_latency_s=tier.request_overhead_s,
                       host_bytes=tier.host_bytes if self.host else 0)
        return super().executor(lifetimes, op_times, capacity_pages, tier, flash_config,
                                initial_resident=initial_resident, log=log)


@register_policy
class G10GDSSSDPolicy(_G10GDSPolicy):
    """G10-GDS-SSD: G10's plan over GPUDirect storage, the SSD alone."""

    name = "g10_gds_ssd"
    host = False


@register_policy
class G10GDSFullPolicy(_G10GDSPolicy):
    """G10-GDS-FULL: G10's plan over GPUDirect storage and host memory."""

    name = "g10_gds_full"
