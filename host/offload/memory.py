"""Where the training tensors and the NDP slices sit: the *memory placement* of a
single-GPU run, registered by name.

* **local** — the tensors in the GPU's own DRAM, one NDP unit beside each of its memory
  controllers (matNDP). GPU kernels and NDP work share that DRAM.
* **expander** — the tensors (activations, weights, gradients and optimizer state: the
  whole iteration) in a memory expander behind the GPU's off-chip link, the NDP slices a
  bump in the wire before each of the expander's memory controllers (the NDPX
  arrangement). Every byte a GPU kernel moves crosses the link, which is full duplex:
  reads and writes each have the link's bandwidth. The NDP never uses the link; GPU
  kernels and NDP work share the expander's DRAM. The link and the expander's memory are
  those of the NDPXNet model (:class:`~matndp.host.ndpxnet.NDPXNetConfig`).

A placement answers what the planner and the schedule ask of the memory system: an op's
time as a GPU kernel, whether it is memory-bound there, the DRAM bandwidth all clients
together can draw, and the memory controllers that carry NDP slices.
"""

from dataclasses import dataclass, field
from typing import ClassVar

from ..gpu import GPUPreset, baseline_timeline, compute_time_s, memory_time_s, op_time_s
from ..ndpxnet import NDPXNetConfig
from ..registry import Registry


__all__ = ["MemoryPlacement", "LocalMemory", "ExpanderMemory", "MEMORY_PLACEMENTS",
           "memory_placement"]


# name -> memory placement class, in registration order
MEMORY_PLACEMENTS = Registry("memory placement")


def memory_placement(name, gpu):
    """The memory placement registered as ``name`` for ``gpu`` (a :class:`GPUPreset`)."""
    return MEMORY_PLACEMENTS.lookup(name)(gpu)


@dataclass(frozen=True)
class MemoryPlacement:
    """The memory system of ``gpu`` as the offload planner sees it."""

    name: ClassVar[str]
    help: ClassVar[str]

    gpu: GPUPreset

    def op_time_s(self, graph, op):
        """Run time of ``op`` as a GPU kernel, launch overhead included: the roofline of
        :mod:`matndp.host.gpu` over this memory system."""
        return self.gpu.launch_overhead_s + max(compute_time_s(graph, op, self.gpu),
                                                self.memory_time_s(graph, op))

    def memory_time_s(self, graph, op):
        """Time of ``op``'s memory traffic as a GPU kernel."""
        raise NotImplementedError

    def is_memory_bound(self, graph, op):
        return self.memory_time_s(graph, op) >= compute_time_s(graph, op, self.gpu)

    def timeline(self, graph):
        """The baseline: every op a GPU kernel, one after another in graph order."""
        return baseline_timeline(graph, self.gpu, lambda op: self.op_time_s(graph, op))

    @property
    def usable_bps(self):
        """What GPU kernels and NDP work together can draw from the DRAM that holds the
        tensors."""
        raise NotImplementedError

    @property
    def ndp_controllers(self):
        """Memory controllers with NDP slices beside them."""
        raise NotImplementedError

    @property
    def launch_overhead_s(self):
        return self.gpu.launch_overhead_s

    def link_bytes(self, gpu_dram_bytes):
        """Bytes crossing the GPU's off-chip link when GPU kernels move ``gpu_dram_bytes``."""
        raise NotImplementedError

    def describe(self):
        """The placement and its parameters, JSON-able."""
        return {"name": self.name}


@MEMORY_PLACEMENTS.register
@dataclass(frozen=True)
class LocalMemory(MemoryPlacement):
    """``local``: the tensors in ``gpu``'s own DRAM, NDP slices beside each of its memory
    controllers; times are :mod:`matndp.host.gpu`'s."""

    name = "local"
    help = "tensors in the GPU's own DRAM, NDP beside its memory controllers (matNDP)"

    def op_time_s(self, graph, op):
        return op_time_s(graph, op, self.gpu)       # a measured duration included

    def memory_time_s(self, graph, op):
        return memory_time_s(graph, op, self.gpu)

    @property
    def usable_bps(self):
        return self.gpu.usable_bandwidth_bps

    @property
    def ndp_controllers(self):
        return self.gpu.memory_controllers

    def link_bytes(self, gpu_dram_bytes):
        return 0


@MEMORY_PLACEMENTS.register
@dataclass(frozen=True)
class ExpanderMemory(MemoryPlacement):
    """``expander``: the link (``link_gbs`` per direction at ``link_efficiency``) and the
    expander's memory (``expander_memory_gbs`` over ``expander_channels`` controllers).
    A GPU kernel kind reaches the same fraction of the link's achieved bandwidth as it
    reaches of the achievable DRAM bandwidth locally (its multi-pass and irregular-access
    losses travel with it); the expander's DRAM bounds the kernel as local DRAM does."""

    name = "expander"
    help = ("tensors in a memory expander behind the GPU's off-chip link, NDP as a bump "
            "in the wire before its memory controllers (NDPX)")

    expander: NDPXNetConfig = field(default_factory=lambda: NDPXNetConfig(gpus=1))

    @property
    def link_bps(self):
        """The link's achieved bandwidth, one direction."""
        return self.expander.link_gbs * 1e9 * self.expander.link_efficiency

    @property
    def dram_bps(self):
        return self.expander.expander_memory_gbs * 1e9

    def memory_time_s(self, graph, op):
        efficiency = self.gpu.efficiency
        kind = efficiency.memory_for(op.kind)
        link_rate = self.link_bps * kind / efficiency.achievable_bandwidth
        read = sum(graph.tensor_bytes(t) for t in op.inputs)
        written = sum(graph.tensor_bytes(t) for t in op.outputs)
        return max(read / link_rate, written / link_rate,
                   (read + written) / (self.dram_bps * kind))

    def op_time_s(self, graph, op):
        if op.duration_s is not None:
            raise ValueError(f"op {op.name!r} carries a measured duration, which the "
                             f"{self.name} placement cannot reprice; it times ops from "
                             "their FLOPs and bytes")
        return super().op_time_s(graph, op)

    @property
    def usable_bps(self):
        return self.dram_bps * self.gpu.efficiency.achievable_bandwidth

    @property
    def ndp_controllers(self):
        return self.expander.expander_channels

    def link_bytes(self, gpu_dram_bytes):
        return gpu_dram_bytes

    def describe(self):
        return {"name": self.name, "link_gbs": self.expander.link_gbs,
                "link_efficiency": self.expander.link_efficiency,
                "expander_memory_gbs": self.expander.expander_memory_gbs,
                "expander_channels": self.expander.expander_channels}
