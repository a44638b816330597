"""The overlapped schedule of one iteration, given every op's placement.

The GPU runs its kernels in graph order on one stream; the NDP runs standalone work in
graph order. Both start an item only when its dependencies have finished. Memory
bandwidth is shared in a fluid model: the GPU takes what its kernel needs (the arbiter
gives it priority), NDP work progresses at the rate the remaining bandwidth and its share
of NDP compute allow. The sum never exceeds the usable DRAM bandwidth.
"""

import math
from dataclasses import dataclass, field

from .costs import WorkCost, fused_duration
from .placements import GpuCarrier, NdpCarrier
from .records import BandwidthSegment, Busy


__all__ = ["QueueRun", "run_queues"]


@dataclass
class _GpuItem:
    op: object
    duration: float
    bytes: int
    ndp_busy: float            # share of NDP compute its riders keep busy
    deps: set
    riders: list               # on-the-fly ops that ride on this kernel


@dataclass
class _NdpItem:
    op: object
    work: WorkCost
    deps: set
    members: list              # ops finished with this item (fused kernels included)


@dataclass
class QueueRun:
    """The two queues run to completion: when every op started and finished, the busy
    intervals of each side, the bandwidth over time, and the DRAM bytes of each side and
    of every offloaded op."""

    done: dict = field(default_factory=dict)
    started: dict = field(default_factory=dict)
    gpu_busy: list = field(default_factory=list)
    ndp_busy: list = field(default_factory=list)
    bandwidth: list = field(default_factory=list)
    bytes_gpu: int = 0
    bytes_ndp: int = 0
    op_bytes: dict = field(default_factory=dict)


def _work_by_carrier(graph, placements, costs):
    """The :class:`~host.offload.placements.WorkShare` of every offloaded op by carrier,
    with dead intermediate writes removed, and the NDP DRAM bytes of each offloaded op."""
    readers = {}
    for op in graph.ops:
        for tensor_id in op.inputs:
            readers.setdefault(tensor_id, set()).add(op.name)
    producer_of = {t: op.name for op in graph.ops for t in op.outputs}
    by_carrier, op_bytes = {}, {}
    writes_in = {}          # op -> the share whose work writes its outputs
    for op in graph.ops:
        p = placements[op.name]
        if not p.offloaded:
            continue
        shares = p.work_shares(op, lambda on_the_fly: costs.phases(op, p.trigger, on_the_fly),
                               costs.two_phase(p.kernel))
        for share in shares:
            by_carrier.setdefault(share.carrier, []).append(share)
        writes_in[op.name] = shares[-1]
        op_bytes[op.name] = sum(share.work.bytes for share in shares)
        written_by_gpu = not placements[producer_of.get(p.trigger, op.name)].offloaded
        if p.trigger is not None and not written_by_gpu and p.carrier.op != op.name \
                and readers.get(p.trigger) == {op.name}:
            # the trigger only ever lives in the NDP's registers: its write disappears
            writer, size = producer_of[p.trigger], graph.tensor_bytes(p.trigger)
            share = writes_in[writer]
            share.work = share.work.without_bytes(size)
            op_bytes[writer] -= size
    return by_carrier, op_bytes


def _items(graph, memory, placements, costs):
    by_carrier, op_bytes = _work_by_carrier(graph, placements, costs)
    gpu_items, ndp_items = [], []
    for op in graph.ops:
        if not placements[op.name].offloaded:
            riders = by_carrier.get(GpuCarrier(op.name), [])
            compute = sum(share.work.compute_s for share in riders)
            extra = sum(share.work.bytes for share in riders)
            deps = set(op.deps)
            for share in riders:
                deps |= set(share.op.deps)
            deps -= {op.name} | {share.op.name for share in riders}
            duration = fused_duration(graph, memory, op, memory.op_time_s(graph, op), compute,
                                      extra)
            gpu_items.append(_GpuItem(op, duration, graph.op_bytes(op) + extra,
                                      min(1.0, compute / duration) if duration > 0 else 0.0,
                                      deps, [share.op.name for share in riders]))
        members = by_carrier.get(NdpCarrier(op.name))
        if members:
            work = WorkCost(sum(share.work.compute_s for share in members),
                            sum(share.work.bytes for share in members),
                            sum(share.work.packets for share in members))
            deps = set()
            for share in members:
                deps |= set(share.op.deps)
            deps -= {share.op.name for share in members}
            ndp_items.append(_NdpItem(op, work, deps, [share.op.name for share in members]))
    return gpu_items, ndp_items, op_bytes


def run_queues(graph, memory, placements, costs):
    """Event-driven run of the two in-order queues on the DRAM of ``memory`` (a
    :class:`~matndp.host.offload.memory.MemoryPlacement`), as a :class:`QueueRun`."""
    gpu_items, ndp_items, op_bytes = _items(graph, memory, placements, costs)
    usable = memory.usable_bps
    run = QueueRun(op_bytes=op_bytes)
    done, started = run.done, run.started
    t, gi, ni = 0.0, 0, 0
    gpu_cur = ndp_cur = None
    gpu_end = ndp_left = ndp_start = 0.0

    def ready(deps):
        return all(d in done for d in deps)

    while True:
        if gpu_cur is None and gi < len(gpu_items) and ready(gpu_items[gi].deps):
            gpu_cur, gpu_end = gpu_items[gi], t + gpu_items[gi].duration
            gi += 1
            for name in (gpu_cur.op.name, *gpu_cur.riders):
                started[name] = t
        if ndp_cur is None and ni < len(ndp_items) and ready(ndp_items[ni].deps):
            ndp_cur, ndp_left, ndp_start = ndp_items[ni], 1.0, t
            ni += 1
            for name in ndp_cur.members:
                started.setdefault(name, t)
        if gpu_cur is None and ndp_cur is None:
            if gi == len(gpu_items) and ni == len(ndp_items):
                break
            waiting = (gpu_items[gi] if gi < len(gpu_items) else ndp_items[ni]).op.name
            raise RuntimeError(f"schedule deadlock at {waiting!r}")   # a planner bug
        gpu_bps = gpu_cur.bytes / gpu_cur.duration if gpu_cur and gpu_cur.duration > 0 else 0.0
        next_t = gpu_end if gpu_cur else math.inf
        rate, ndp_finish = 0.0, math.inf    # rate: fraction of the NDP item per second
        if ndp_cur is not None:
            work = ndp_cur.work
            rate = math.inf
            if work.compute_s > 0:
                compute_share = 1.0 - (gpu_cur.ndp_busy if gpu_cur else 0.0)
                rate = min(rate, max(0.0, compute_share) / work.compute_s)
            if work.bytes > 0:
                rate = min(rate, max(0.0, usable - gpu_bps) / work.bytes)
            if rate == math.inf:
                ndp_finish = t
            elif rate > 0:
                ndp_finish = t + ndp_left / rate
            next_t = min(next_t, ndp_finish)
        if next_t > t:
            ndp_bps = rate * ndp_cur.work.bytes if ndp_cur is not None and math.isfinite(rate) else 0.0
            run.bandwidth.append(BandwidthSegment(t, next_t, gpu_bps, ndp_bps))
            if ndp_cur is not None and math.isfinite(rate):
                ndp_left -= rate * (next_t - t)
        t = next_t
        if gpu_cur is not None and gpu_end <= t:
            name = gpu_cur.op.name
            done[name] = t
            run.gpu_busy.append(Busy(started[name], t, name))
            run.bytes_gpu += graph.op_bytes(gpu_cur.op)
            run.bytes_ndp += gpu_cur.bytes - graph.op_bytes(gpu_cur.op)
            for rider in gpu_cur.riders:
                if not costs.two_phase(placements[rider].kernel):
                    done[rider] = t
            gpu_cur = None
        if ndp_cur is not None and ndp_finish <= t:
            for name in ndp_cur.members:
                done[name] = t
            run.ndp_busy.append(Busy(ndp_start, t, ndp_cur.op.name))
            run.bytes_ndp += ndp_cur.work.bytes
            ndp_cur = None
    return run
