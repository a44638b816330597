"""TM-Training-like static planning (Park et al., ACM TOS 2025).

One profiled iteration gives every op's time. Because every iteration repeats it, a single
plan says, for every idle gap of every tensor, how many of its pages leave HBM (the *split*:
the rest stays) and when they are written out and prefetched. The plan is a ring of N
slots and is replayed unchanged every iteration.

Planning budgets the flash pipe: a slot of ``t`` seconds can carry ``t × derate`` seconds
of transfers at the sustained bandwidths (reads and programs share the flash dies); fixed
latencies delay a transfer without occupying the pipe. While some slot is over capacity,
the worst slot is relieved by the tensor idle there whose next use is furthest away
(Belady), and by exactly the excess: the *split*. Its write-out is packed into the
earliest budget after the use that opens the gap, its prefetch into the latest budget
before the next use, and its pages are free in between. A split limited by the budget
takes what fits and the next tensor gives the rest. A transfer window never reaches into
a slot still over capacity (relieving that slot by more evictions would cost flash time
and traffic); what the transfer then lacks is the plan's *planned stall*. When the only
pressure left is pages in transit, the largest such transfer goes just in time.

The timing monitor compares the stalls of an executed iteration with the plan's. If the
iteration stalled more than planned (beyond tolerance), then at every boundary that did,
it lowers ``derate`` over the windows of the transfers due there by the measured ratio
and replans: the split ratios in those windows shrink (less streams there, more stays or
is placed elsewhere). Stalls within tolerance leave the plan untouched, so a plan that
meets its timing is reused as is. (Whether an adjusted plan is kept is decided by the
the :class:`TimingMonitor` from the adjusted plan's measured iteration time.)
"""

from dataclasses import dataclass, replace

import numpy as np

from ..plan import Chunk, Plan, PlanError, ring_add, ring_values
from ..plan_check import check_plan
from .base import TierPolicy
from .registry import register_policy
from .tm_tiers import TierPaths, choose_flash_share, plan_tm_tiers


__all__ = ["TMConfig", "plan_tm", "plan_tm_for", "monitor_derate", "TimingMonitor", "TMPolicy"]


@dataclass(frozen=True)
class TMConfig:
    # Excess stall, relative to the planned iteration time and then to the compute time of
    # the transfer windows due at a boundary, that makes the monitor adjust the plan.
    monitor_tolerance: float = 0.05
    # Floor of the derate factor (no slot is ever planned as carrying nothing).
    min_derate: float = 1 / 64
    # Whether the monitor runs, and how many adjustments it may try.
    monitor: bool = True
    max_adjustments: int = 3


def _consume(budget, start, stop, amount, forward):
    """Take ``amount`` seconds from budget[start:stop] on the ring, earliest (forward) or
    latest slots first; return the seconds not covered."""
    n = len(budget)
    slots = range(start, stop) if forward else range(stop - 1, start - 1, -1)
    for slot in slots:
        if amount <= 0:
            break
        take = min(budget[slot % n], amount)
        if take > 0:
            budget[slot % n] -= take
            amount -= take
    return max(amount, 0.0)


def _first_covering(values, need):
    """Number of leading values whose running sum reaches ``need``; None if never."""
    if need <= 0:
        return 0
    running = np.cumsum(values)
    k = int(np.searchsorted(running, need * (1 - 1e-12)))
    return None if k >= len(values) else k + 1


class _Planner:
    def __init__(self, lifetimes, slot_times, capacity, costs, derate):
        self.lt = lifetimes
        self.n = n = lifetimes.n_ops
        self.capacity = int(capacity)
        self.costs = costs
        self.page = lifetimes.page_bytes
        times = np.asarray(slot_times, dtype=float)
        self.budget = times * np.asarray(derate, dtype=float)
        self.cum = np.concatenate([[0.0], np.cumsum(np.concatenate([times, times, times]))])
        self.occupancy = lifetimes.base_occupancy.astype(np.int64).copy()
        self.stall = np.zeros(n)
        self.chunks = []
        gaps = lifetimes.gaps
        self.gaps = gaps
        self.lo, self.hi, self.size, self.dirty = lifetimes.gap_arrays()
        self.remaining = self.size.copy()
        self.gap_index = {(g.tensor, g.after): k for k, g in enumerate(gaps)}
        page = self.page
        self.write_per_page = np.where(self.dirty, page * costs.write_s_per_byte, 0.0)
        self.write_latency = np.where(self.dirty, costs.write_latency_s, 0.0)
        self.read_per_page = page * costs.read_s_per_byte

    # Transfer time splits into occupancy of the flash pipe (bytes / bandwidth, taken from
    # the slots' budget) and latency (a delay that overlaps other transfers).
    def write_s(self, index, pages):
        return float(pages * self.write_per_page[index])

    def read_s(self, pages):
        return pages * self.read_per_page

    def run(self):
        n = self.n
        while True:
            slot = int(np.argmax(self.occupancy))
            over = int(self.occupancy[slot]) - self.capacity
            if over <= 0:
                return
            lo, hi = self.lo, self.hi
            at = np.where(lo <= slot, slot, slot + n)          # the slot in each gap's frame
            inside = (lo <= at) & (at < hi) & (self.remaining > 0)
            candidates = np.flatnonzero(inside)
            if len(candidates) == 0:
                self.reshape_in_transit(slot)
                continue
            at = at[candidates]
            # Belady: the tensor whose next use is furthest away in time goes first.
            order = np.argsort(-(self.cum[hi[candidates]] - self.cum[at]), kind="stable")
            candidates, at = candidates[order], at[order]
            prefix = np.concatenate([[0.0], np.cumsum(np.concatenate([self.budget] * 3))])
            write_room = prefix[at] - prefix[lo[candidates]]
            read_room = prefix[hi[candidates]] - prefix[at + 1]
            late = ((self.cum[at] - self.cum[lo[candidates]] < self.write_latency[candidates])
                    | (self.cum[hi[candidates]] - self.cum[at + 1] < self.costs.read_latency_s))
            read_room = np.where(late, 0.0, read_room)
            with np.errstate(divide="ignore", invalid="ignore"):
                fits_write = np.where(self.dirty[candidates],
                                      np.floor(write_room / np.where(self.dirty[candidates],
                                                                     self.write_per_page[candidates], 1)),
                                      np.inf)
            fits = np.minimum(fits_write, np.floor(read_room / self.read_per_page))
            fits = np.minimum(fits, self.remaining[candidates])
            feasible = np.flatnonzero(fits >= 1)
            if len(feasible):
                pick = int(feasible[0])
                pages = int(min(fits[pick], over))
                self.commit(int(candidates[pick]), pages, int(at[pick]))
            else:
                pages = int(min(self.remaining[candidates[0]], over))
                self.commit(int(candidates[0]), pages, int(at[0]))

    def commit(self, index, pages, at):
        """Evict ``pages`` of gap ``index`` so that they are out of HBM at slot ``at``.

        The write-out is packed into the earliest budget after the opening use and the
        prefetch into the latest budget before the next use; the pages are free in between.
        A transfer window never reaches into a slot that is still over capacity: there the
        window stops and the time the transfer lacks becomes planned stall. Paying that
        stall now is cheaper than the extra traffic of relieving the slot with more
        evictions later (the flash pipe is the scarce resource either way)."""
        n, cum = self.n, self.cum
        lo, hi = int(self.lo[index]), int(self.hi[index])
        write, read = self.write_s(index, pages), self.read_s(pages)
        write_latency, read_latency = float(self.write_latency[index]), self.costs.read_latency_s
        over = ring_values(self.occupancy, lo, hi) > self.capacity     # slots lo .. hi-1

        due = lo
        if write or write_latency:
            k = _first_covering(ring_values(self.budget, lo, at), write)
            due = at if k is None else lo + k
            due = max(due, min(at, lo + int(np.searchsorted(cum[lo:at + 1] - cum[lo], write_latency))))
            crowded = np.flatnonzero(over[:due - lo])
            if len(crowded):
                due = lo + int(crowded[0])
        write_left = _consume(self.budget, lo, due, write, forward=True)
        write_left += max(0.0, write_latency - (cum[due] - cum[lo]))
        self.stall[due % n] += write_left

        k = _first_covering(ring_values(self.budget, at + 1, hi)[::-1], read)
        fetch_at = at + 1 if k is None else hi - k
        lead = cum[hi] - cum[at + 1:hi + 1]          # time from each boundary to the use
        fetch_at = min(fetch_at, at + 1 + max(0, int(np.searchsorted(-lead, -read_latency, side="right")) - 1))
        crowded = np.flatnonzero(over[fetch_at - lo:])
        if len(crowded):
            fetch_at = fetch_at + int(crowded[-1]) + 1
        read_left = _consume(self.budget, fetch_at, hi, read, forward=False)
        read_left += max(0.0, read_latency - (cum[hi] - cum[fetch_at]))
        self.stall[hi % n] += read_left

        ring_add(self.occupancy, due, fetch_at, -pages)
        self.remaining[index] -= pages
        gap = self.gaps[index]
        self.chunks.append(Chunk(gap.tensor, pages, gap.after, lo, due, fetch_at, hi))

    def reshape_in_transit(self, slot):
        """No gap has pages left to give at ``slot``: the pressure there is pages in transit.
        Delay the prefetch (or advance the write-out deadline) of the largest chunk in
        transit so that it is out of HBM at ``slot``; its whole transfer time is then
        counted as planned stall."""
        n = self.n
        best = None
        for number, chunk in enumerate(self.chunks):
            for phase, start, stop in (("fetch", chunk.fetch_at, chunk.fetch_due),
                                       ("write", chunk.evict_at, chunk.evict_due)):
                at = slot if start <= slot < stop else slot + n
                if start <= at < stop and (best is None or chunk.pages > best[0].pages):
                    best = (chunk, number, phase, at)
        if best is None:
            raise PlanError(f"no static plan fits HBM of {self.capacity} pages at op "
                            f"{self.lt.graph.ops[slot].name!r} ({int(self.occupancy[slot])} "
                            "pages needed)")
        chunk, number, phase, at = best
        if phase == "fetch":
            ring_add(self.occupancy, chunk.fetch_at, at + 1, -chunk.pages)
            self.stall[chunk.fetch_due % n] += self.read_s(chunk.pages) + self.costs.read_latency_s
            self.chunks[number] = replace(chunk, fetch_at=at + 1)
        else:
            index = self.gap_index[(chunk.tensor, chunk.gap_after)]
            ring_add(self.occupancy, at, chunk.evict_due, -chunk.pages)
            self.stall[at % n] += self.write_s(index, chunk.pages) + self.write_latency[index]
            self.chunks[number] = replace(chunk, evict_due=at)


def plan_tm(lifetimes, slot_times, capacity_pages, costs, derate=None):
    n = lifetimes.n_ops
    derate = np.ones(n) if derate is None else np.asarray(derate, dtype=float)
    planner = _Planner(lifetimes, slot_times, capacity_pages, costs, derate)
    planner.run()
    chunks = tuple(sorted(planner.chunks, key=lambda c: (c.evict_at, c.tensor, c.gap_after, c.pages)))
    return Plan("tm", n, int(capacity_pages), chunks, strict=True,
                planned_stall_s=tuple(float(s) for s in planner.stall))


def plan_tm_for(context, derate=None, flash_share=None):
    """The TM plan for a run's planning context: over HBM and flash (:func:`plan_tm`), or
    over HBM, host DRAM and flash when the run has a host tier (:func:`plan_tm_tiers`,
    with ``flash_share`` of every evicted part to flash; None: the best ratio)."""
    tier, flash = context.tier, context.flash
    if tier is not None and tier.host_bytes:
        paths = TierPaths.of(tier, flash, context.lifetimes.page_bytes)
        return plan_tm_tiers(context.lifetimes, context.op_times, context.capacity_pages,
                             paths, derate, flash_share)
    return plan_tm(context.lifetimes, context.op_times, context.capacity_pages,
                   context.costs, derate)


def monitor_derate(plan, derate, stall_by_boundary, slot_times, config=TMConfig()):
    """New derate factors if some boundary stalled beyond the plan, else None."""
    n = plan.n_slots
    times = np.asarray(slot_times, dtype=float)
    planned = np.asarray(plan.planned_stall_s) if plan.planned_stall_s else np.zeros(n)
    excess = np.asarray(stall_by_boundary) - planned
    # The plan meets its timing if the iteration stalls no more than planned, within
    # tolerance of the planned iteration time; then it is reused untouched.
    if excess.sum() <= config.monitor_tolerance * float(times.sum() + planned.sum()):
        return None
    windows = {}
    for chunk in plan.chunks:
        windows.setdefault(chunk.evict_due % n, []).append((chunk.evict_at, chunk.evict_due))
        windows.setdefault(chunk.fetch_due % n, []).append((chunk.fetch_at, chunk.fetch_due))
    new = np.array(derate, dtype=float)
    changed = False
    for boundary in np.flatnonzero(excess > 0):
        spans = windows.get(int(boundary))
        if not spans:
            continue
        mask = np.zeros(n, dtype=bool)
        for start, stop in spans:
            mask[np.arange(start, stop) % n] = True
        window_s = float(times[mask].sum())
        if excess[boundary] <= config.monitor_tolerance * window_s:
            continue
        factor = window_s / (window_s + float(excess[boundary]))
        new[mask] = np.maximum(new[mask] * factor, config.min_derate)
        changed = True
    return new if changed else None


@dataclass(frozen=True)
class _Trial:
    """An adjusted plan on trial: what it replaced, with its derate and iteration time."""

    previous: Plan
    previous_derate: np.ndarray
    previous_iteration_s: float


class TimingMonitor:
    """The timing monitor around the planner, called after every executed iteration.

    From the second iteration on (the first warms the tiers up) it compares stalls with
    the plan (:func:`monitor_derate`) and may return an adjusted plan. An adjusted plan is
    kept only if its first iteration is faster than that of the plan it replaced;
    otherwise the previous plan comes back and the monitor stops adjusting, so it never
    settles on a plan slower than the one it started from."""

    def __init__(self, context, config=TMConfig(), replan=None):
        self.context = context
        self.config = config
        # derate -> plan; by default the planner of the run's tiers.
        self.replan = replan or (lambda derate: plan_tm_for(context, derate))
        self.derate = np.ones(len(context.op_times))
        self.adjustments = 0
        self.frozen = not config.monitor
        self.trial = None

    def after_iteration(self, plan, record, *, warm_up):
        """The plan for the next iteration, given the one that ran and its record."""
        elapsed = record.end_s - record.start_s
        if self.trial is not None:
            trial, self.trial = self.trial, None
            if elapsed >= trial.previous_iteration_s:
                self.derate = trial.previous_derate
                self.frozen = True
                return trial.previous
        if warm_up or self.frozen or self.adjustments >= self.config.max_adjustments:
            return plan
        context = self.context
        new = monitor_derate(plan, self.derate, record.stall_by_boundary, context.op_times,
                             self.config)
        if new is None:
            return plan
        adjusted = self.replan(new)
        if adjusted == plan:
            return plan
        if context.check:
            check_plan(adjusted, context.lifetimes)
        self.trial = _Trial(plan, self.derate, elapsed)
        self.derate = new
        self.adjustments += 1
        return adjusted


@register_policy
class TMPolicy(TierPolicy):
    """Static planning with data splitting; the timing monitor may adjust the plan, for
    which the run gets up to ``2 × max_adjustments + 1`` iterations more (an adjustment
    and its trial each take one)."""

    name = "tm"

    def __init__(self, config=TMConfig()):
        self.config = config
        self.monitor = None
        self.flash_share = None       # the split ratio chosen for a host tier

    def plan(self, context):
        tier = context.tier
        if tier is not None and tier.host_bytes:
            paths = TierPaths.of(tier, context.flash, context.lifetimes.page_bytes)
            self.flash_share, plan = choose_flash_share(
                context.lifetimes, context.op_times, context.capacity_pages, paths)
            return plan
        return plan_tm_for(context)

    def first_plan(self, context):
        self.monitor = TimingMonitor(
            context, self.config,
            lambda derate: plan_tm_for(context, derate, self.flash_share))
        return super().first_plan(context)

    def initial_residency(self, context, plan):
        lifetimes = context.lifetimes
        return lifetimes.pages - plan.initial_absent(len(lifetimes.tensor_ids))

    def iteration_limit(self, iterations):
        return iterations + 2 * self.config.max_adjustments + 1

    def next_plan(self, plan, record, *, warm_up):
        return self.monitor.after_iteration(plan, record, warm_up=warm_up)

    def run_metrics(self):
        """With a host tier, the split ratio the plan was chosen with (``flash_share``)."""
        return {} if self.flash_share is None else {"flash_share": self.flash_share}
