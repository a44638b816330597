"""NDP offload planning and the overlapped GPU + NDP schedule of one iteration.

Placement, op by op in graph order:

* **gpu** — the op stays a GPU kernel (no NDP kernel for it, compute-bound, or no gain).
* **on_the_fly** — the op's last-produced input (its *trigger*) is written by a GPU kernel;
  the NDP units see those writes and compute on the data in flight, so the trigger is
  never re-read. The kernel rides on the producer: the producer's duration stretches if
  the NDP cannot keep pace (the trigger queue back-pressures the GPU). Kernels that need a
  whole-tensor reduction before they can apply it (normalization, softmax) accumulate
  statistics on the fly and run their apply phase afterwards as standalone NDP work.
* **ndp** — standalone NDP work: the trigger was written by the NDP itself (NDP writes
  pass no filter) or by no op of the iteration; the NDP reads all operands.

Two refinements: a one-phase kernel whose trigger another NDP kernel computes is fused
into that kernel (the value is still in the NDP's registers, as a DL compiler would fuse
them; an intermediate nothing else reads is never written), and an op nothing later in
the iteration waits for (the optimizer step) runs standalone rather than stretching its
producer, when the NDP has the spare time to finish it before the iteration ends.

Schedule: the GPU runs its kernels in graph order on one stream; the NDP runs standalone
work in graph order. Both start an item only when its dependencies have finished. Memory
bandwidth is shared in a fluid model: the GPU takes what its kernel needs (the arbiter
gives it priority), NDP work progresses at the rate the remaining bandwidth and its share
of NDP compute allow. The sum never exceeds the usable DRAM bandwidth.
"""

import math
from dataclasses import dataclass, field

from .calibration import load_calibration
from .gpu import baseline_timeline, is_memory_bound, op_time_s


__all__ = ["PlannerConfig", "Placement", "ScheduledOp", "Plan", "plan_offload", "POLICIES"]

POLICIES = ("auto", "all", "none")
_EPS = 1e-15


@dataclass(frozen=True)
class PlannerConfig:
    """policy: ``auto`` offloads a memory-bound op when its NDP estimate beats the GPU
    kernel; ``all`` offloads every op that has an NDP kernel; ``none`` is the baseline.
    offload_optimizer: allow the optimizer step on the NDP."""

    policy: str = "auto"
    offload_optimizer: bool = True

    def __post_init__(self):
        if self.policy not in POLICIES:
            raise ValueError(f"unknown offload policy {self.policy!r}; known: {', '.join(POLICIES)}")


@dataclass(frozen=True)
class Placement:
    op: str
    where: str                 # "gpu", "on_the_fly" or "ndp"
    kernel: str = None
    trigger: str = None        # tensor whose writes trigger the kernel
    producer: str = None       # GPU op that writes the trigger (on_the_fly)
    reason: str = ""
    carrier: tuple = None      # ("gpu", op) it rides on or ("ndp", op) whose work it joins


@dataclass(frozen=True)
class ScheduledOp:
    op: str
    kind: str
    phase: str
    where: str
    start_s: float
    end_s: float
    dram_bytes: int


@dataclass
class Plan:
    graph: object
    gpu: object
    calibration: object
    placements: dict
    schedule: list                         # ScheduledOp per op, graph order
    gpu_busy: list                         # (start, end, op) of GPU kernels
    ndp_busy: list                         # (start, end, op) of standalone NDP work
    bandwidth: list                        # (start, end, gpu+on-the-fly B/s, standalone NDP B/s)
    baseline: list                         # gpu.TimelineEntry per op
    dram_bytes_gpu: int = 0
    dram_bytes_ndp: int = 0
    ndp_cycles: float = 0.0                # slice cycles of all NDP kernels (both phases)
    meta: dict = field(default_factory=dict)

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
        return [name for name, p in self.placements.items() if p.where != "gpu"]

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


@dataclass
class _NdpWork:
    """Cost of (a phase of) an NDP kernel."""

    compute_s: float
    bytes: int
    packets: float


@dataclass
class _GpuItem:
    op: object
    index: int
    duration: float
    bytes: int
    ndp_busy: float
    deps: set
    riders: list               # on-the-fly ops finished with this kernel


@dataclass
class _NdpItem:
    op: object
    index: int
    work: _NdpWork
    deps: set
    members: list              # ops finished with this item (fused kernels included)


class _Costs:
    def __init__(self, graph, gpu, calibration):
        self.graph, self.gpu, self.calibration = graph, gpu, calibration
        hardware = calibration.hardware
        self.slices = gpu.memory_controllers * hardware.slices_per_controller
        self.clock = hardware.clock_hz
        self.lanes = hardware.lanes
        self.usable_bps = gpu.usable_bandwidth_bps

    def packets(self, op, trigger):
        """FP32-packet equivalents: a 16-bit packet holds twice the elements, so it costs
        twice the vector instructions on the FP32 lanes."""
        tensor_id = trigger or max(op.inputs, key=self.graph.tensor_bytes)
        return math.ceil(self.graph.tensors[tensor_id].elements / self.lanes)

    def _compute_s(self, packets, cycles, fixed):
        return packets * cycles / (self.clock * self.slices) + fixed / self.clock

    def phases(self, op, trigger, on_the_fly):
        """(stream, after) work of the op's kernel; ``after`` is None for one-phase kernels."""
        cost = self.calibration.cost(op.attrs["ndp_kernel"])
        packets = self.packets(op, trigger)
        graph = self.graph
        others = sum(graph.tensor_bytes(t) for t in op.inputs if t != trigger)
        trigger_bytes = graph.tensor_bytes(trigger) if trigger else 0
        outputs = sum(graph.tensor_bytes(t) for t in op.outputs)
        if not cost.two_phase:
            read = others + (0 if on_the_fly else trigger_bytes)
            return _NdpWork(self._compute_s(packets, cost.stream_cycles, cost.fixed_cycles),
                            read + outputs, packets), None
        # statistics pass over the trigger, then the apply pass re-reads it
        stream = _NdpWork(self._compute_s(packets, cost.stream_cycles, cost.fixed_cycles / 2),
                          0 if on_the_fly else trigger_bytes, packets)
        after = _NdpWork(self._compute_s(packets, cost.after_cycles, cost.fixed_cycles / 2),
                         trigger_bytes + others + outputs, packets)
        return stream, after

    def alone_s(self, work):
        """NDP time with all bandwidth and all slices to itself."""
        return max(work.compute_s, work.bytes / self.usable_bps)


def _trigger_of(op, producers, index_of):
    """The input written last before ``op`` (its arrival completes the operands)."""
    best, best_index = None, -1
    for tensor_id in op.inputs:
        producer = producers.get(tensor_id)
        if producer is not None and index_of[producer] > best_index:
            best, best_index = tensor_id, index_of[producer]
    return best, producers.get(best)


class _Planner:
    """Greedy placement in graph order. Every offloaded op joins a *carrier*: the GPU
    kernel whose writes it rides on (``("gpu", op)``) or an NDP work item
    (``("ndp", op)``). A one-phase kernel whose trigger another NDP kernel computes joins
    that kernel's carrier: the value is still in the NDP's registers (the fusion a DL
    compiler performs), and if nothing else reads it, it is never written."""

    def __init__(self, graph, gpu, calibration, config, costs, baseline_s):
        self.graph, self.gpu, self.config, self.costs = graph, gpu, config, costs
        self.calibration, self.baseline_s = calibration, baseline_s
        self.index_of = {op.name: i for i, op in enumerate(graph.ops)}
        self.readers = {}
        for op in graph.ops:
            for tensor_id in op.inputs:
                self.readers.setdefault(tensor_id, []).append(op.name)
        # where the iteration stands in baseline time, to judge the NDP's spare capacity
        self.baseline_end = {}
        now = 0.0
        for op in graph.ops:
            now += baseline_s[op.name]
            self.baseline_end[op.name] = now
        self.ndp_free_at = 0.0     # when the standalone NDP queue drains (estimate)
        self.placements, self.producers = {}, {}
        self.carrier = {}          # op -> carrier of the op's outputs
        self.riding = {}           # GPU op -> (NDP compute s, extra bytes) riding on it

    def run(self):
        for op in self.graph.ops:
            kernel = op.attrs.get("ndp_kernel")
            placement = Placement(op.name, "gpu", reason="no NDP kernel")
            if kernel is not None and kernel in self.calibration.kernels:
                placement = self._decide(op, kernel)
            self.placements[op.name] = placement
            self._record(op, placement)
            for tensor_id in op.outputs:
                self.producers[tensor_id] = op.name
        return self.placements

    def _record(self, op, placement):
        if placement.where == "gpu":
            self.carrier[op.name] = ("gpu", op.name)
            return
        two_phase = self.calibration.cost(placement.kernel).two_phase
        if placement.carrier[0] == "gpu":
            stream, _ = self.costs.phases(op, placement.trigger, True)
            compute, extra = self.riding.get(placement.carrier[1], (0.0, 0))
            self.riding[placement.carrier[1]] = (compute + stream.compute_s, extra + stream.bytes)
            # a two-phase kernel writes its outputs in its own apply phase
            self.carrier[op.name] = ("ndp", op.name) if two_phase else placement.carrier
        else:
            self.carrier[op.name] = placement.carrier

    def _sink(self, op):
        """Nothing later in the iteration reads what the op writes (the optimizer step)."""
        position = self.index_of[op.name]
        return all(self.index_of[r] <= position for t in op.outputs
                   for r in self.readers.get(t, ()))

    def _deps_before(self, op, anchor):
        return all(self.index_of[d] <= self.index_of[anchor] for d in op.deps)

    def _spare_ndp(self, op, trigger, producer):
        """Can the NDP finish this op standalone before the GPU would finish the iteration
        (so deferring it costs nothing)?"""
        stream, after = self.costs.phases(op, trigger, False)
        work_s = self.costs.alone_s(stream) + (self.costs.alone_s(after) if after else 0.0)
        start = max(self.ndp_free_at, self.baseline_end[producer])
        return start + work_s <= self.baseline_end[self.graph.ops[-1].name]

    def _can_join(self, op, carrier):
        """A kernel joins a carrier only if all it waits for is in the carrier or done
        before the carrier's root starts; anything else could deadlock the queues."""
        root = self.index_of[carrier[1]]
        return all(self.carrier.get(d) == carrier or self.index_of[d] <= root for d in op.deps)

    def _decide(self, op, kernel):
        config, costs, graph, gpu = self.config, self.costs, self.graph, self.gpu
        gpu_s = self.baseline_s[op.name]
        if config.policy == "none":
            return Placement(op.name, "gpu", kernel, reason="policy none")
        if op.kind == "optimizer" and not config.offload_optimizer:
            return Placement(op.name, "gpu", kernel, reason="optimizer offload disabled")
        if config.policy == "auto" and not is_memory_bound(graph, op, gpu):
            return Placement(op.name, "gpu", kernel, reason="compute-bound on the GPU")
        trigger, producer = _trigger_of(op, self.producers, self.index_of)
        one_phase = not self.calibration.cost(kernel).two_phase
        carrier = self.carrier.get(producer)
        where, reason, estimate = "ndp", "no producer in the iteration", None
        if producer is not None and self._deps_before(op, producer):
            if carrier == ("gpu", producer):
                where, reason = "on_the_fly", f"triggered by the writes of {producer}"
                stream, after = costs.phases(op, trigger, True)
                producer_op = graph.ops[self.index_of[producer]]
                producer_s = op_time_s(graph, producer_op, gpu)
                compute, extra = self.riding.get(producer, (0.0, 0))
                before = _fused_duration(graph, gpu, producer_op, producer_s, compute, extra)
                after_riding = _fused_duration(graph, gpu, producer_op, producer_s,
                                               compute + stream.compute_s, extra + stream.bytes)
                stretch = after_riding - before
                estimate = stretch + (costs.alone_s(after) if after else 0.0)
                if self._sink(op) and stretch > 0 and self._spare_ndp(op, trigger, producer):
                    # nothing waits for it: better overlapped later than stretching now
                    where, reason, estimate = "ndp", "deferred: riding would stretch " + producer, None
                    carrier = None
            elif carrier is not None and carrier[0] == "gpu" and one_phase \
                    and self._can_join(op, carrier):
                where, reason = "on_the_fly", f"fused with {producer}, riding on {carrier[1]}"
                stream, _ = costs.phases(op, trigger, True)
                estimate = costs.alone_s(stream)
            elif carrier is not None and one_phase and self._can_join(op, carrier):
                where, reason = "ndp", f"fused into the NDP kernel of {carrier[1]}"
                stream, _ = costs.phases(op, trigger, True)
                estimate = costs.alone_s(stream)
            else:
                carrier = None
                reason = "trigger written by NDP"
        else:
            carrier = None
            if producer is not None:
                reason = "operands arrive after the trigger"
        standalone = estimate is None
        if standalone:
            stream, after = costs.phases(op, trigger, False)
            estimate = costs.alone_s(stream) + (costs.alone_s(after) if after else 0.0)
            carrier = ("ndp", op.name)
        if config.policy == "auto" and estimate >= gpu_s:
            return Placement(op.name, "gpu", kernel, trigger, reason=(
                f"NDP estimate {estimate * 1e6:.1f} us not below GPU {gpu_s * 1e6:.1f} us"))
        if standalone:
            ready = self.baseline_end[producer] if producer else 0.0
            self.ndp_free_at = max(self.ndp_free_at, ready) + estimate
        return Placement(op.name, where, kernel, trigger,
                         producer if where == "on_the_fly" else None, reason, carrier)


def _fused_duration(graph, gpu, producer_op, producer_s, ndp_compute_s, extra_bytes):
    """A GPU kernel with on-the-fly NDP kernels riding on its writes: it ends when the
    slower of the two ends, and no sooner than the combined traffic allows."""
    if ndp_compute_s == 0 and extra_bytes == 0:
        return producer_s
    combined = (graph.op_bytes(producer_op) + extra_bytes) / gpu.usable_bandwidth_bps
    return max(producer_s, gpu.launch_overhead_s + ndp_compute_s,
               gpu.launch_overhead_s + combined)


def _op_work(graph, placements, costs):
    """NDP work of every offloaded op by carrier, with dead intermediate writes removed.

    Returns ``riding`` (GPU op -> [(op, work)] riding on its writes), ``items`` (NDP item
    root -> [(op, work)]) and the NDP DRAM bytes per offloaded op."""
    readers = {}
    for op in graph.ops:
        for tensor_id in op.inputs:
            readers.setdefault(tensor_id, set()).add(op.name)
    producer_of = {t: op.name for op in graph.ops for t in op.outputs}
    riding, items, op_bytes = {}, {}, {}
    writes_in = {}          # op -> (bucket, key, index) of the work that writes its outputs
    for op in graph.ops:
        p = placements[op.name]
        if p.where == "gpu":
            continue
        two_phase = costs.calibration.cost(p.kernel).two_phase
        kind, root = p.carrier
        if kind == "ndp" and root == op.name:            # standalone: reads everything
            stream, after = costs.phases(op, p.trigger, False)
            if after is not None:
                stream = _NdpWork(stream.compute_s + after.compute_s,
                                  stream.bytes + after.bytes, stream.packets + after.packets)
            entries = [(items, op.name, stream)]
        elif two_phase:                                 # statistics ride, apply follows
            stream, after = costs.phases(op, p.trigger, True)
            entries = [(riding, root, stream), (items, op.name, after)]
        else:                                           # rides or is fused: no trigger read
            stream, _ = costs.phases(op, p.trigger, True)
            entries = [(riding if kind == "gpu" else items, root, stream)]
        for bucket, key, work in entries:
            bucket.setdefault(key, []).append([op, work])
            writes_in[op.name] = (bucket, key, len(bucket[key]) - 1)
        op_bytes[op.name] = sum(work.bytes for _, _, work in entries)
        written_by_gpu = placements[producer_of.get(p.trigger, op.name)].where == "gpu"
        if p.trigger is not None and not written_by_gpu and root != op.name \
                and readers.get(p.trigger) == {op.name}:
            # the trigger only ever lives in the NDP's registers: its write disappears
            writer, size = producer_of[p.trigger], graph.tensor_bytes(p.trigger)
            bucket, key, index = writes_in[writer]
            entry = bucket[key][index]
            entry[1] = _NdpWork(entry[1].compute_s, entry[1].bytes - size, entry[1].packets)
            op_bytes[writer] -= size
    return riding, items, op_bytes


def _items(graph, gpu, placements, costs):
    riding, items, op_bytes = _op_work(graph, placements, costs)
    gpu_items, ndp_items = [], []
    for i, op in enumerate(graph.ops):
        if placements[op.name].where == "gpu":
            riders = riding.get(op.name, [])
            compute = sum(work.compute_s for _, work in riders)
            extra = sum(work.bytes for _, work in riders)
            deps = set(op.deps)
            for rider, _ in riders:
                deps |= set(rider.deps)
            deps -= {op.name} | {rider.name for rider, _ in riders}
            base_s = op_time_s(graph, op, gpu)
            duration = _fused_duration(graph, gpu, op, base_s, compute, extra)
            gpu_items.append(_GpuItem(op, i, duration, graph.op_bytes(op) + extra,
                                      min(1.0, compute / duration) if duration > 0 else 0.0,
                                      deps, [r.name for r, _ in riders]))
        if op.name in items:
            members = items[op.name]
            work = _NdpWork(sum(w.compute_s for _, w in members),
                            sum(w.bytes for _, w in members),
                            sum(w.packets for _, w in members))
            deps = set()
            for member, _ in members:
                deps |= set(member.deps)
            deps -= {m.name for m, _ in members}
            ndp_items.append(_NdpItem(op, i, work, deps, [m.name for m, _ in members]))
    return gpu_items, ndp_items, op_bytes


def _simulate(graph, gpu, placements, costs):
    """Event-driven run of the two in-order queues; returns finish and start times per op,
    busy intervals, bandwidth segments and the DRAM bytes of each side."""
    gpu_items, ndp_items, op_bytes = _items(graph, gpu, placements, costs)
    usable = gpu.usable_bandwidth_bps
    done, started = {}, {}
    gpu_busy, ndp_busy, bandwidth = [], [], []
    t, gi, ni = 0.0, 0, 0
    gpu_cur = ndp_cur = None
    gpu_end = ndp_left = ndp_start = 0.0
    bytes_gpu = bytes_ndp = 0

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
            bandwidth.append((t, next_t, gpu_bps, ndp_bps))
            if ndp_cur is not None and math.isfinite(rate):
                ndp_left -= rate * (next_t - t)
        t = next_t
        if gpu_cur is not None and gpu_end <= t:
            name = gpu_cur.op.name
            done[name] = t
            gpu_busy.append((started[name], t, name))
            bytes_gpu += graph.op_bytes(gpu_cur.op)
            bytes_ndp += gpu_cur.bytes - graph.op_bytes(gpu_cur.op)
            for rider in gpu_cur.riders:
                if not costs.calibration.cost(placements[rider].kernel).two_phase:
                    done[rider] = t
            gpu_cur = None
        if ndp_cur is not None and ndp_finish <= t:
            for name in ndp_cur.members:
                done[name] = t
            ndp_busy.append((ndp_start, t, ndp_cur.op.name))
            bytes_ndp += ndp_cur.work.bytes
            ndp_cur = None
    return done, started, gpu_busy, ndp_busy, bandwidth, bytes_gpu, bytes_ndp, op_bytes


def ndp_cycles(graph, placements, costs):
    total = 0.0
    for op in graph.ops:
        p = placements[op.name]
        if p.where != "gpu":
            cost = costs.calibration.cost(p.kernel)
            total += costs.packets(op, p.trigger) * cost.cycles_per_packet + cost.fixed_cycles
    return total


def plan_offload(graph, gpu, calibration=None, config=None):
    """Place every op of ``graph`` and schedule the iteration on ``gpu`` with matNDP."""
    calibration = calibration or load_calibration()
    config = config or PlannerConfig()
    baseline = baseline_timeline(graph, gpu)
    baseline_s = {entry.op: entry.duration_s for entry in baseline}
    costs = _Costs(graph, gpu, calibration)
    placements = _Planner(graph, gpu, calibration, config, costs, baseline_s).run()
    done, started, gpu_busy, ndp_busy, bandwidth, bytes_gpu, bytes_ndp, op_bytes = \
        _simulate(graph, gpu, placements, costs)
    schedule = []
    for op in graph.ops:
        p = placements[op.name]
        nbytes = graph.op_bytes(op) if p.where == "gpu" else op_bytes[op.name]
        schedule.append(ScheduledOp(op.name, op.kind, op.phase, p.where, started[op.name],
                                    done[op.name], nbytes))
    return Plan(graph, gpu, calibration, placements, schedule, gpu_busy, ndp_busy, bandwidth,
                baseline, bytes_gpu, bytes_ndp, ndp_cycles(graph, placements, costs),
                meta={"policy": config.policy, "ndp_slices": costs.slices})
