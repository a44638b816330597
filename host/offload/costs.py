"""What NDP kernels and GPU kernels cost in the offload planner's model."""

import math
from dataclasses import dataclass
from typing import NamedTuple

from .memory import LocalMemory


__all__ = ["WorkCost", "KernelPhases", "OffloadCosts", "fused_duration"]


@dataclass(frozen=True)
class WorkCost:
    """Cost of (a phase of) an NDP kernel: compute time on all slices, DRAM bytes, and
    FP32-packet equivalents."""

    compute_s: float
    bytes: int
    packets: float

    def __add__(self, other):
        return WorkCost(self.compute_s + other.compute_s, self.bytes + other.bytes,
                        self.packets + other.packets)

    def without_bytes(self, nbytes):
        return WorkCost(self.compute_s, self.bytes - nbytes, self.packets)


class KernelPhases(NamedTuple):
    """The phase that can run while the trigger streams by, and the apply phase of a
    kernel that needs a finished reduction first (None for one-phase kernels)."""

    stream: WorkCost
    after: WorkCost | None


class OffloadCosts:
    """NDP kernel costs of one graph on the NDP units of ``memory`` (a
    :class:`~matndp.host.offload.memory.MemoryPlacement`; default: beside ``gpu``'s own
    memory controllers)."""

    def __init__(self, graph, gpu, calibration, memory=None):
        self.graph, self.gpu, self.calibration = graph, gpu, calibration
        self.memory = memory or LocalMemory(gpu)
        hardware = calibration.hardware
        self.slices = self.memory.ndp_controllers * hardware.slices_per_controller
        self.clock = hardware.clock_hz
        self.lanes = hardware.lanes
        self.usable_bps = self.memory.usable_bps

    def two_phase(self, kernel):
        return self.calibration.cost(kernel).two_phase

    def packets(self, op, trigger):
        """FP32-packet equivalents: a 16-bit packet holds twice the elements, so it costs
        twice the vector instructions on the FP32 lanes."""
        tensor_id = trigger or max(op.inputs, key=self.graph.tensor_bytes)
        return math.ceil(self.graph.tensors[tensor_id].elements / self.lanes)

    def _compute_s(self, packets, cycles, fixed):
        return packets * cycles / (self.clock * self.slices) + fixed / self.clock

    def phases(self, op, trigger, on_the_fly):
        """The :class:`KernelPhases` of the op's kernel; ``on_the_fly``: the trigger
        arrives with the producer's writes and is not read."""
        cost = self.calibration.cost(op.attrs["ndp_kernel"])
        packets = self.packets(op, trigger)
        graph = self.graph
        others = sum(graph.tensor_bytes(t) for t in op.inputs if t != trigger)
        trigger_bytes = graph.tensor_bytes(trigger) if trigger else 0
        outputs = sum(graph.tensor_bytes(t) for t in op.outputs)
        if not cost.two_phase:
            read = others + (0 if on_the_fly else trigger_bytes)
            return KernelPhases(WorkCost(self._compute_s(packets, cost.stream_cycles, cost.fixed_cycles),
                                         read + outputs, packets), None)
        # statistics pass over the trigger, then the apply pass re-reads it
        stream = WorkCost(self._compute_s(packets, cost.stream_cycles, cost.fixed_cycles / 2),
                          0 if on_the_fly else trigger_bytes, packets)
        after = WorkCost(self._compute_s(packets, cost.after_cycles, cost.fixed_cycles / 2),
                         trigger_bytes + others + outputs, packets)
        return KernelPhases(stream, after)

    def alone_s(self, work):
        """NDP time with all bandwidth and all slices to itself."""
        return max(work.compute_s, work.bytes / self.usable_bps)

    def standalone_s(self, op, trigger):
        """Both phases as standalone work, each alone on the NDP."""
        stream, after = self.phases(op, trigger, False)
        return self.alone_s(stream) + (self.alone_s(after) if after else 0.0)

    def _per_launch(self, op, placement, per_packet):
        cost = self.calibration.cost(placement.kernel)
        return self.packets(op, placement.trigger) * per_packet(cost) + cost.fixed_cycles

    def ndp_cycles(self, op, placement):
        """Slice cycles of the op's kernel, both phases."""
        return self._per_launch(op, placement, lambda cost: cost.cycles_per_packet)

    def ndp_instructions(self, op, placement):
        """Instructions the slices issue for the op's kernel, both phases; the once-per-launch
        work counted a cycle an instruction (the initializer and finalizer, single µthreads
        issuing at most one a cycle)."""
        return self._per_launch(op, placement, lambda cost: cost.instructions_per_packet)


def fused_duration(graph, memory, producer_op, producer_s, ndp_compute_s, extra_bytes):
    """A GPU kernel with on-the-fly NDP kernels riding on its writes: it ends when the
    slower of the two ends, and no sooner than the combined traffic allows on the DRAM of
    ``memory`` (a :class:`~matndp.host.offload.memory.MemoryPlacement`)."""
    if ndp_compute_s == 0 and extra_bytes == 0:
        return producer_s
    combined = (graph.op_bytes(producer_op) + extra_bytes) / memory.usable_bps
    return max(producer_s, memory.launch_overhead_s + ndp_compute_s,
               memory.launch_overhead_s + combined)
