"""G10-like lifetime-based migration (Zhang et al., MICRO 2023).

From the profiled op times, a tensor is evicted whole in an idle gap when the gap is longer
than G10's round-trip rule, 2 × (flash latency + system latency + size / bandwidth) +
0.5 × size / bandwidth. Gaps are taken longest first while some slot they free is still
over capacity. The write-out is issued right after the use that opens the gap; the
prefetch is issued ahead of the next use by the estimated transfer time times
``prefetch_margin``. Transfers are estimated one at a time, without contention between
them; whatever pressure the plan leaves (or contention creates) is met at run time by
demand paging, as G10 does through UVM.

With a host-DRAM tier the planner chooses, per idle gap, where the tensor goes, as G10's
``prefetch_lru`` does: a gap longer than the SSD's round trip (the rule above with the
SSD's latency and bandwidth) sends it to flash; a shorter gap still longer than the host
round trip (2 × (system latency + size / link bandwidth) + 0.5 × size / link bandwidth)
sends it to host DRAM, if host DRAM has room for it over the whole gap. A gap for flash
whose write-out the SSD cannot finish by its estimated time — the SSD's bandwidth in the
slots after the use is taken by earlier write-outs (G10's bandwidth check) — goes to host
DRAM instead when there is room. Gaps are taken in
order of the pressure they can relieve: size × the time of the over-capacity slots they
span (G10's "area"), largest first.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..costs import TransferCosts
from ..plan import Chunk, Plan, ring_values, ring_add
from .base import TierPolicy
from .registry import register_policy


__all__ = ["G10Config", "plan_g10", "G10Policy"]


@dataclass(frozen=True)
class G10Config:
    prefetch_margin: float = 1.5


def _rule_s(costs, one_way_s, flash_latency_s):
    """G10's eviction threshold: 2 × (device latency + system latency + one way) + 0.5 ×
    one way."""
    return 2 * (flash_latency_s + costs.system_latency_s + one_way_s) + 0.5 * one_way_s


def plan_g10(lifetimes, slot_times, capacity_pages, costs, config=G10Config(), *,
             flash_costs=None, host_pages=0):
    """G10's plan; with ``flash_costs`` and ``host_pages`` (a host-DRAM tier), each gap
    is sent to flash or host DRAM by its length (the module's docstring)."""
    n = lifetimes.n_ops
    times = np.asarray(slot_times, dtype=float)
    cum = np.concatenate([[0.0], np.cumsum(np.concatenate([times, times, times]))])
    page = lifetimes.page_bytes
    three_tier = flash_costs is not None and host_pages > 0

    def span(a, b):          # time of slots a .. b-1 (absolute, 0 <= a <= b < 3n)
        return cum[b] - cum[a]

    occupancy = lifetimes.base_occupancy.astype(np.int64).copy()
    host_occupancy = np.zeros(n, dtype=np.int64)
    over = np.concatenate([occupancy > capacity_pages] * 3)
    over_time = np.concatenate([[0.0], np.cumsum(np.where(over, np.concatenate([times] * 3), 0.0))])
    candidates = []
    for gap in lifetimes.gaps:
        size = int(lifetimes.pages[gap.tensor])
        idle = span(gap.after + 1, gap.before)
        if three_tier:
            ssd_rule = _rule_s(flash_costs, size * page * flash_costs.read_s_per_byte,
                               flash_costs.flash_latency_s)
            host_rule = _rule_s(costs, size * page * costs.read_s_per_byte, 0.0)
            if idle > ssd_rule:
                place = "flash"
            elif idle > host_rule:
                place = "host"
            else:
                continue
            area = size * (over_time[gap.before] - over_time[gap.after + 1])
            candidates.append((area, idle, gap, place))
        else:
            one_way = size * page * costs.read_s_per_byte
            if idle > _rule_s(costs, one_way, costs.flash_latency_s):
                candidates.append((idle, idle, gap, None))
    candidates.sort(key=lambda item: (-item[0], -item[1], item[2].tensor, item[2].after))

    # Seconds of SSD write time left in each slot (three copies of the ring, G10's
    # per-kernel bandwidth estimate).
    ssd_budget = np.concatenate([times] * 3)
    chunks = []
    for _, idle, gap, place in candidates:
        if occupancy.max() <= capacity_pages:
            break
        size = int(lifetimes.pages[gap.tensor])
        start = gap.after + 1
        if place == "flash":
            need = size * page * flash_costs.write_s_per_byte
            ideal = cum[start] + flash_costs.write_latency_s + costs.system_latency_s + need
            finish = min(int(np.searchsorted(cum, ideal)), gap.before)
            if ssd_budget[start:finish].sum() < need * (1 - 1e-12):
                place = "host"
        path = flash_costs if place == "flash" else costs
        write_s = path.write_latency_s + size * page * path.write_s_per_byte
        read_s = (path.read_latency_s + size * page * path.read_s_per_byte) * config.prefetch_margin
        # First boundary by which the write-out is estimated to be done.
        due = start + int(np.searchsorted(cum[start:gap.before + 1] - cum[start], write_s))
        # Last boundary that leaves the estimated prefetch time before the next use.
        lead = cum[gap.before] - cum[start:gap.before + 1]
        fetch_at = start + int(np.searchsorted(-lead, -read_s, side="right")) - 1
        if fetch_at <= due or due > gap.before:
            continue
        if ring_values(occupancy, due, fetch_at).max() <= capacity_pages:
            continue
        if place == "host" and ring_values(host_occupancy, start, gap.before).max() + size > host_pages:
            continue
        ring_add(occupancy, due, fetch_at, -size)
        if place == "host":
            ring_add(host_occupancy, start, gap.before, size)
        elif place == "flash":
            left = need
            for slot in range(start, finish):
                take = min(ssd_budget[slot], left)
                ssd_budget[slot] -= take
                left -= take
        chunks.append(Chunk(gap.tensor, size, gap.after, start, due, fetch_at, gap.before,
                            destination=place))
    return Plan("g10", n, capacity_pages, tuple(chunks), strict=False)


@register_policy
class G10Policy(TierPolicy):
    """Lifetime-based migration planned once; the pressure it leaves goes to demand paging
    (its plans are not ``strict``)."""

    name = "g10"

    def __init__(self, config=G10Config()):
        self.config = config

    def plan(self, context):
        tier, flash = context.tier, context.flash
        if tier is None or not tier.host_bytes:
            return plan_g10(context.lifetimes, context.op_times, context.capacity_pages,
                            context.costs, self.config)
        return plan_g10(context.lifetimes, context.op_times, context.capacity_pages,
                        context.costs, self.config,
                        flash_costs=TransferCosts.of(replace(tier, host_bytes=0), flash),
                        host_pages=tier.host_pages)
