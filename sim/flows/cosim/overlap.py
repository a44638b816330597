"""Steps the host model schedules at the same time, run as one stage.

The host model's schedule overlaps a standalone NDP work item with the GPU kernel running
beside it when neither needs the other's result. Here such a pair of steps becomes one
stage: the GPU's requests keep their times (spread over the GPU op's scheduled time), the
NDP sweep's requests are spread evenly over the same time in the cycles between, and the
launches of both are programmed before the stage (on entries side by side, their
scratchpad regions one after the other), which ends when all its kernels complete.

Which steps merge, for each GPU step in order: every NDP step (a standalone op, or the
later phase of an offloaded op) whose first stage has kernels, whose planned interval on
the NDP overlaps the GPU kernel's, and that is independent of the GPU op and of the
kernels riding on it, of the other NDP steps merged with it, and of the steps between it
and the GPU step (it moves next to the GPU step). Independent: neither is an ancestor of
the other in the graph's dependencies. An NDP step's first stage is merged; its further
phases (``bn_bwd_apply`` after ``bn_bwd_stats``) need the first's result and follow the
merged stage, and its tiering stall moves before it.
"""

from dataclasses import dataclass, replace

import numpy as np

from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.flows.kernel_run import scratchpad_bases


__all__ = ["Concurrent", "concurrent_steps", "launches_fit", "side_by_side", "merge_stages", "stage_times",
           "overlap_steps", "serial_share", "planned_interval", "planned_overlap"]


@dataclass(frozen=True)
class Concurrent:
    """GPU step ``gpu`` (an index into the steps) and the NDP steps ``ndp`` merged with
    it, with the planned overlap of each (seconds)."""
    gpu: int
    ndp: tuple
    planned_s: tuple


class _Ancestors:
    """Every op's transitive dependencies in ``graph``, made when first asked."""

    def __init__(self, graph):
        self.deps = {op.name: tuple(op.deps) for op in graph.ops}
        self.known = {}

    def __call__(self, name):
        if name in self.known:
            return self.known[name]
        # Iteratively, in post-order: a whole iteration's chains of dependencies can be
        # deeper than Python's recursion limit.
        stack = [name]
        while stack:
            top = stack[-1]
            pending = [dep for dep in self.deps.get(top, ()) if dep not in self.known]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            found = set()
            for dep in self.deps.get(top, ()):
                found.add(dep)
                found |= self.known[dep]
            self.known[top] = frozenset(found)
        return self.known[name]

    def independent(self, ours, theirs):
        return not any(a in self(b) or b in self(a) for a in ours for b in theirs)


def _ndp_root(plan, op):
    """The host model's NDP work item an NDP step's sweep belongs to (its carrier's root
    op): a standalone op's carrier, or the later phase of an on-the-fly op, its own."""
    placement = plan.placements[op]
    return placement.carrier.op if placement.where == "ndp" else op


def planned_interval(step, plan, schedule):
    """(start, end) seconds of ``step`` in the host model's schedule: a GPU op's kernel, an
    NDP step's work item (shared by the ops fused into it)."""
    if step.where == "gpu":
        entry = schedule[step.op]
        return entry.start_s, entry.end_s
    root = _ndp_root(plan, step.op)
    busy = next((item for item in plan.ndp_busy if item.op == root), None)
    if busy is None:
        entry = schedule[step.op]
        return entry.start_s, entry.end_s
    return busy.start_s, busy.end_s


def _members(step):
    return (step.op, *step.riders)


def launches_fit(plans, config=KERNEL_CONFIG):
    """Whether launch plans ``plans`` can be programmed together on the slice of
    ``config``: an entry each, and their scratchpad regions side by side."""
    if len(plans) > config.trigger.filter_entries:
        return False
    try:
        scratchpad_bases([plan.launch for plan in plans], config)
    except ValueError:
        return False
    return True


def side_by_side(plans, config=KERNEL_CONFIG):
    """``plans`` with their scratchpad regions one after the other (each was planned with
    its own stage's from 0), their argument words following."""
    bases = scratchpad_bases([plan.launch for plan in plans], config)
    return [replace(plan, scratchpad_base=base, arguments=[int(word) for word in
                                                            plan.launch.arguments(plan.addresses, base)])
            for plan, base in zip(plans, bases)]


def concurrent_steps(steps, graph, plan, schedule, fits=launches_fit):
    """The :class:`Concurrent` groups of ``steps`` (see the module); ``fits(plans)``: whether
    a stage may program launch plans ``plans`` together."""
    ancestors = _Ancestors(graph)
    intervals = [planned_interval(step, plan, schedule) for step in steps]
    taken, groups = set(), []
    for g, gpu in enumerate(steps):
        if gpu.where != "gpu" or len(gpu.stages) != 1:
            continue
        launches = list(gpu.stages[0].launches)
        chosen, overlaps = [], []
        for n, ndp in enumerate(steps):
            if n in taken or ndp.where == "gpu" or not ndp.stages or not ndp.stages[0].launches:
                continue
            overlap = min(intervals[g][1], intervals[n][1]) - max(intervals[g][0], intervals[n][0])
            if overlap <= 0 or not fits([*launches, *ndp.stages[0].launches]):
                continue
            between = [op for step in steps[min(g, n) + 1:max(g, n)] for op in _members(step)]
            others = [op for c in chosen for op in _members(steps[c])]
            if ancestors.independent(_members(ndp), [*_members(gpu), *between, *others]):
                chosen.append(n)
                overlaps.append(overlap)
                launches += ndp.stages[0].launches
        if chosen:
            taken.update(chosen)
            groups.append(Concurrent(g, tuple(chosen), tuple(overlaps)))
    return groups


def stage_times(gaps):
    """The cycle each request of a stage is offered at, from its gaps (each the idle cycles
    after the previous request's transfer cycle), with nothing held back."""
    return np.cumsum(np.asarray(gaps, dtype=np.int64) + 1) - 1


def merge_stages(gpu, sweeps, interval, gap_limit, rebase=side_by_side):
    """One stage of GPU stage ``gpu`` and sweep stages ``sweeps``: the GPU's requests at
    their times, each sweep's spread evenly over the GPU's stream in the cycles between
    (over one memory slot of ``interval`` cycles a request when the GPU has none); the idle
    cycles a gap cannot hold (above ``gap_limit``) go after the stage, as a GPU stage's
    do. The launches, the GPU's then the sweeps', are ``rebase`` d to run side by side.

    Spread, not as early as the slots allow: the stage is one request stream in order, so
    a sweep request the slice holds back (its kernel slower than the memory's slots) holds
    every GPU request behind it, and the GPU's gaps count from the request before."""
    gpu_times = stage_times(gpu.gap)
    times = [gpu_times]
    for sweep in sweeps:
        span = int(gpu_times[-1]) + 1 if len(gpu_times) else len(sweep) * interval
        times.append(np.floor(np.arange(len(sweep)) * (span / max(1, len(sweep)))).astype(np.int64))
    times = np.concatenate(times)
    parts = [gpu, *sweeps]
    # On a tie the GPU's request goes first and the sweep's a cycle later.
    order = np.argsort(times, kind="stable")
    columns = {key: np.concatenate([getattr(part, key) for part in parts])[order]
               for key in ("addr", "write", "data", "mask", "source")}
    gaps = np.maximum(np.diff(times[order], prepend=-1) - 1, 0)
    over = int(np.maximum(gaps - gap_limit, 0).sum())
    label = " + ".join([gpu.label, *(sweep.label for sweep in sweeps)])
    return replace(gpu, label=label, launches=rebase([*gpu.launches, *(plan for s in sweeps for plan in s.launches)]),
                   gap=np.minimum(gaps, gap_limit).astype(np.uint64), idle_after=gpu.idle_after + over,
                   **columns)


def overlap_steps(steps, graph, plan, schedule, *, interval, gap_limit, fits=launches_fit, rebase=side_by_side):
    """``steps`` with the concurrent ones (:func:`concurrent_steps`) merged: the GPU
    step's stage holds the NDP steps' first stages, each NDP step follows it with its
    further stages (none for a one-phase kernel) and names the GPU op in
    ``concurrent_with``; the NDP steps' tiering stalls move before the merged stage.
    Returns the new steps, the groups, and the steps of each group as they were (their
    stalls cut: :func:`serial_share` runs them)."""
    groups = concurrent_steps(steps, graph, plan, schedule, fits)
    moved = {n: group for group in groups for n in group.ndp}
    order = []
    for index, step in enumerate(steps):
        if index in moved:
            continue
        group = next((group for group in groups if group.gpu == index), None)
        if group is None:
            order.append(step)
            continue
        ndps = [steps[n] for n in group.ndp]
        merged = merge_stages(step.stages[0], [ndp.stages[0] for ndp in ndps], interval, gap_limit, rebase)
        order.append(replace(step, stall_cycles=step.stall_cycles + sum(n.stall_cycles for n in ndps),
                             stages=[merged]))
        order += [replace(ndp, stall_cycles=0, stages=ndp.stages[1:], concurrent_with=step.op) for ndp in ndps]
    serial = [replace(steps[index], stall_cycles=0) for group in groups for index in (group.gpu, *group.ndp)]
    return order, groups, serial


def serial_share(share):
    """``share`` (an :class:`~matndp.sim.flows.cosim.iteration.IterationShare`) with only
    the steps its overlap merged, as they were before, one after another, and no stalls:
    the run that gives what the merges saved. None when nothing merged."""
    if not share.serial_steps:
        return None
    return replace(share, steps=[replace(step, stages=list(step.stages)) for step in share.serial_steps],
                   serial_steps=[])


def _union_length(intervals):
    total, end = 0.0, -np.inf
    for start, stop in sorted(intervals):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def planned_overlap(steps, plan, schedule, clock_hz):
    """The host model's time for ``steps`` (cycles): ``serial``, the sum of their distinct
    planned intervals (a GPU kernel each, an NDP work item once however many steps share
    it), as if run one after another; ``overlapped``, the length of their union, as
    scheduled."""
    intervals = list(dict.fromkeys(planned_interval(step, plan, schedule) for step in steps))
    serial = sum(end - start for start, end in intervals)
    return {"serial_cycles": int(round(serial * clock_hz)),
            "overlapped_cycles": int(round(_union_length(intervals) * clock_hz))}
