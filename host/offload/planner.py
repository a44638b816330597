"""Placement of every op, in graph order, and the plan of one iteration.

Every offloaded op joins a *carrier* (:mod:`.placements`). The op's last-produced input
is its *trigger*. If a GPU kernel writes the trigger, the op rides on that kernel's
writes (on the fly). A one-phase kernel whose trigger another NDP kernel computes joins
that kernel's carrier: the value is still in the NDP's registers (the fusion a DL compiler
performs), and if nothing else reads it, it is never written. Otherwise the op is
standalone NDP work. An op nothing later in the iteration waits for (the optimizer step)
runs standalone rather than stretching its producer, when the NDP has the spare time to
finish it before the iteration ends. The offload policy (:mod:`.policies`) decides which
candidates are taken.
"""

from dataclasses import dataclass
from typing import NamedTuple

from ..calibration import load_calibration
from .costs import OffloadCosts, fused_duration
from .memory import MEMORY_PLACEMENTS, memory_placement
from .placements import GpuCarrier, NdpCarrier, OnGpu, OnTheFly, Standalone
from .policies import offload_policy
from .records import Plan, ScheduledOp
from .schedule import run_queues


__all__ = ["PlannerConfig", "plan_offload"]


@dataclass(frozen=True)
class PlannerConfig:
    """policy: the registered name of the offload policy (:data:`OFFLOAD_POLICIES`:
    ``auto``, ``all``, ``none``). offload_optimizer: allow the optimizer step on the NDP.
    placement: the registered name of the memory placement (:data:`MEMORY_PLACEMENTS`:
    ``local``, ``expander``)."""

    policy: str = "auto"
    offload_optimizer: bool = True
    placement: str = "local"

    def __post_init__(self):
        offload_policy(self.policy)          # refuses an unknown name
        MEMORY_PLACEMENTS.lookup(self.placement)


class _Trigger(NamedTuple):
    tensor: str | None          # the input written last before the op
    producer: str | None        # the op that writes it (None: written by no op)


def _trigger_of(op, producers, index_of):
    """The input written last before ``op`` (its arrival completes the operands)."""
    best, best_index = None, -1
    for tensor_id in op.inputs:
        producer = producers.get(tensor_id)
        if producer is not None and index_of[producer] > best_index:
            best, best_index = tensor_id, index_of[producer]
    return _Trigger(best, producers.get(best))


@dataclass
class _Riders:
    """NDP compute time and extra DRAM bytes of the kernels riding on one GPU kernel."""

    compute_s: float = 0.0
    bytes: int = 0


class _Planner:
    def __init__(self, graph, memory, calibration, config, costs, baseline_s):
        self.graph, self.memory, self.config, self.costs = graph, memory, config, costs
        self.calibration, self.baseline_s = calibration, baseline_s
        self.policy = offload_policy(config.policy)
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
        self.riding = {}           # GPU op -> _Riders

    def run(self):
        for op in self.graph.ops:
            kernel = op.attrs.get("ndp_kernel")
            placement = OnGpu(op=op.name, reason="no NDP kernel")
            if kernel is not None and kernel in self.calibration.kernels:
                placement = self._decide(op, kernel)
            self.placements[op.name] = placement
            self._record(op, placement)
            for tensor_id in op.outputs:
                self.producers[tensor_id] = op.name
        return self.placements

    def _record(self, op, placement):
        two_phase = placement.offloaded and self.costs.two_phase(placement.kernel)
        if isinstance(placement, OnTheFly):
            stream, _ = self.costs.phases(op, placement.trigger, True)
            riders = self.riding.setdefault(placement.carrier.op, _Riders())
            riders.compute_s += stream.compute_s
            riders.bytes += stream.bytes
        self.carrier[op.name] = placement.output_carrier(two_phase)

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
        start = max(self.ndp_free_at, self.baseline_end[producer])
        return start + self.costs.standalone_s(op, trigger) <= self.baseline_end[self.graph.ops[-1].name]

    def _can_join(self, op, carrier):
        """A kernel joins a carrier only if all it waits for is in the carrier or done
        before the carrier's root starts; anything else could deadlock the queues."""
        root = self.index_of[carrier.op]
        return all(self.carrier.get(d) == carrier or self.index_of[d] <= root for d in op.deps)

    def _stretch_s(self, op, trigger, producer):
        """How much longer ``producer`` runs with the op's streaming phase riding on it."""
        graph, memory = self.graph, self.memory
        stream, _ = self.costs.phases(op, trigger, True)
        producer_op = graph.ops[self.index_of[producer]]
        producer_s = memory.op_time_s(graph, producer_op)
        riders = self.riding.get(producer, _Riders())
        before = fused_duration(graph, memory, producer_op, producer_s, riders.compute_s,
                                riders.bytes)
        after = fused_duration(graph, memory, producer_op, producer_s,
                               riders.compute_s + stream.compute_s, riders.bytes + stream.bytes)
        return after - before

    def _decide(self, op, kernel):
        costs = self.costs
        reason = self.policy.keep_on_gpu(self.graph, op, self.memory, self.config)
        if reason is not None:
            return OnGpu(op=op.name, kernel=kernel, reason=reason)
        trigger, producer = _trigger_of(op, self.producers, self.index_of)
        one_phase = not costs.two_phase(kernel)
        carrier = self.carrier.get(producer)
        placement, reason, estimate = Standalone, "no producer in the iteration", None
        if producer is not None and self._deps_before(op, producer):
            if carrier == GpuCarrier(producer):
                placement, reason = OnTheFly, f"triggered by the writes of {producer}"
                stretch = self._stretch_s(op, trigger, producer)
                _, after = costs.phases(op, trigger, True)
                estimate = stretch + (costs.alone_s(after) if after else 0.0)
                if self._sink(op) and stretch > 0 and self._spare_ndp(op, trigger, producer):
                    # nothing waits for it: better overlapped later than stretching now
                    placement, reason, estimate = Standalone, "deferred: riding would stretch " + producer, None
            elif isinstance(carrier, GpuCarrier) and one_phase and self._can_join(op, carrier):
                placement, reason = OnTheFly, f"fused with {producer}, riding on {carrier.op}"
                estimate = costs.alone_s(costs.phases(op, trigger, True).stream)
            elif carrier is not None and one_phase and self._can_join(op, carrier):
                placement, reason = Standalone, f"fused into the NDP kernel of {carrier.op}"
                estimate = costs.alone_s(costs.phases(op, trigger, True).stream)
            else:
                reason = "trigger written by NDP"
        elif producer is not None:
            reason = "operands arrive after the trigger"
        standalone = estimate is None
        if standalone:
            estimate = costs.standalone_s(op, trigger)
            carrier = NdpCarrier(op.name)
        refusal = self.policy.refuses(estimate, self.baseline_s[op.name])
        if refusal is not None:
            return OnGpu(op=op.name, kernel=kernel, trigger=trigger, reason=refusal)
        if standalone:
            ready = self.baseline_end[producer] if producer else 0.0
            self.ndp_free_at = max(self.ndp_free_at, ready) + estimate
        if placement is OnTheFly:
            return OnTheFly(op=op.name, kernel=kernel, trigger=trigger, producer=producer,
                            reason=reason, carrier=carrier)
        return Standalone(op=op.name, kernel=kernel, trigger=trigger, reason=reason,
                          carrier=carrier)


def plan_offload(graph, gpu, calibration=None, config=None, memory=None):
    """Place every op of ``graph`` and schedule the iteration on ``gpu`` with matNDP, in
    the memory placement ``config.placement`` (or ``memory``, a
    :class:`~matndp.host.offload.memory.MemoryPlacement` of ``gpu`` with parameters of its
    own); the baseline is the same GPU and memory placement without NDP."""
    calibration = calibration or load_calibration()
    config = config or PlannerConfig()
    if memory is None:
        memory = memory_placement(config.placement, gpu)
    elif memory.gpu != gpu:
        raise ValueError(f"the memory placement is of GPU {memory.gpu.name!r}, "
                         f"not of {gpu.name!r}")
    baseline = memory.timeline(graph)
    baseline_s = {entry.op: entry.duration_s for entry in baseline}
    costs = OffloadCosts(graph, gpu, calibration, memory)
    placements = _Planner(graph, memory, calibration, config, costs, baseline_s).run()
    run = run_queues(graph, memory, placements, costs)
    schedule = []
    for op in graph.ops:
        p = placements[op.name]
        nbytes = run.op_bytes[op.name] if p.offloaded else graph.op_bytes(op)
        schedule.append(ScheduledOp(op.name, op.kind, op.phase, p.where, run.started[op.name],
                                    run.done[op.name], nbytes))
    offloaded = [op for op in graph.ops if placements[op.name].offloaded]
    ndp_cycles = sum((costs.ndp_cycles(op, placements[op.name]) for op in offloaded), 0.0)
    ndp_instructions = sum((costs.ndp_instructions(op, placements[op.name]) for op in offloaded), 0.0)
    return Plan(graph, gpu, calibration, placements, schedule, run.gpu_busy, run.ndp_busy,
                run.bandwidth, baseline, run.bytes_gpu, run.bytes_ndp, ndp_cycles,
                ndp_instructions, meta={"policy": config.policy, "ndp_slices": costs.slices},
                memory=memory)
