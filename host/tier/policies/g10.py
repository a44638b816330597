"""G10-like lifetime-based migration (Zhang et al., MICRO 2023).

From the profiled op times, a tensor is evicted whole in an idle gap when the gap is longer
than G10's round-trip rule, 2 × (flash latency + system latency + size / bandwidth) +
0.5 × size / bandwidth. Gaps are taken longest first while some slot they free is still
over capacity. The write-out is issued right after the use that opens the gap; the
prefetch is issued ahead of the next use by the estimated transfer time times
``prefetch_margin``. Transfers are estimated one at a time, without contention between
them; whatever pressure the plan leaves (or contention creates) is met at run time by
demand paging, as G10 does through UVM.
"""

from dataclasses import dataclass

import numpy as np

from ..plan import Chunk, Plan, ring_values, ring_add
from .base import TierPolicy
from .registry import register_policy


__all__ = ["G10Config", "plan_g10", "G10Policy"]


@dataclass(frozen=True)
class G10Config:
    prefetch_margin: float = 1.5


def plan_g10(lifetimes, slot_times, capacity_pages, costs, config=G10Config()):
    n = lifetimes.n_ops
    times = np.asarray(slot_times, dtype=float)
    cum = np.concatenate([[0.0], np.cumsum(np.concatenate([times, times, times]))])
    page = lifetimes.page_bytes

    def span(a, b):          # time of slots a .. b-1 (absolute, 0 <= a <= b < 3n)
        return cum[b] - cum[a]

    occupancy = lifetimes.base_occupancy.astype(np.int64).copy()
    candidates = []
    for gap in lifetimes.gaps:
        size = int(lifetimes.pages[gap.tensor])
        idle = span(gap.after + 1, gap.before)
        one_way = size * page * costs.read_s_per_byte
        rule = 2 * (costs.flash_latency_s + costs.system_latency_s + one_way) + 0.5 * one_way
        if idle > rule:
            candidates.append((idle, gap))
    candidates.sort(key=lambda item: (-item[0], item[1].tensor, item[1].after))

    chunks = []
    for idle, gap in candidates:
        if occupancy.max() <= capacity_pages:
            break
        size = int(lifetimes.pages[gap.tensor])
        write_s = costs.write_latency_s + size * page * costs.write_s_per_byte
        read_s = (costs.read_latency_s + size * page * costs.read_s_per_byte) * config.prefetch_margin
        start = gap.after + 1
        # First boundary by which the write-out is estimated to be done.
        due = start + int(np.searchsorted(cum[start:gap.before + 1] - cum[start], write_s))
        # Last boundary that leaves the estimated prefetch time before the next use.
        lead = cum[gap.before] - cum[start:gap.before + 1]
        fetch_at = start + int(np.searchsorted(-lead, -read_s, side="right")) - 1
        if fetch_at <= due or due > gap.before:
            continue
        if ring_values(occupancy, due, fetch_at).max() <= capacity_pages:
            continue
        ring_add(occupancy, due, fetch_at, -size)
        chunks.append(Chunk(gap.tensor, size, gap.after, start, due, fetch_at, gap.before))
    return Plan("g10", n, capacity_pages, tuple(chunks), strict=False)


@register_policy
class G10Policy(TierPolicy):
    """Lifetime-based migration planned once; the pressure it leaves goes to demand paging
    (its plans are not ``strict``)."""

    name = "g10"

    def __init__(self, config=G10Config()):
        self.config = config

    def plan(self, context):
        return plan_g10(context.lifetimes, context.op_times, context.capacity_pages,
                        context.costs, self.config)
