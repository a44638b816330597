"""Where an op runs, as types: on the GPU, on the fly on the NDP while a GPU kernel writes
its trigger, or standalone on the NDP. Registered by their name (the ``where`` of a
schedule entry and the keys of a report's ``placements``).

An offloaded op's NDP kernel is part of one *carrier*: the GPU kernel whose writes it
rides on (:class:`GpuCarrier`) or a standalone NDP work item (:class:`NdpCarrier`, named
by the op that roots it; kernels fused into it join that item).
"""

from dataclasses import dataclass
from typing import ClassVar


__all__ = ["GpuCarrier", "NdpCarrier", "WorkShare", "Placement", "OnGpu", "OnTheFly",
           "Standalone", "PLACEMENTS"]


@dataclass(frozen=True)
class GpuCarrier:
    """The GPU kernel ``op``: NDP kernels ride on its writes."""

    op: str


@dataclass(frozen=True)
class NdpCarrier:
    """The standalone NDP work item rooted at ``op``."""

    op: str


@dataclass
class WorkShare:
    """The part ``work`` (a :class:`~host.offload.costs.WorkCost`) that ``op``'s kernel
    adds to ``carrier``."""

    carrier: object
    op: object
    work: object


@dataclass(frozen=True, kw_only=True)
class Placement:
    """``op`` placed, with its NDP ``kernel`` (if it has one), the input whose writes
    trigger it, and why it is placed so."""

    where: ClassVar[str]
    offloaded: ClassVar[bool]

    op: str
    kernel: str | None = None
    trigger: str | None = None
    reason: str = ""

    def output_carrier(self, two_phase):
        """The carrier that writes the op's outputs."""
        raise NotImplementedError

    def work_shares(self, op, phases, two_phase):
        """The NDP work the op adds to carriers, from its kernel's ``phases`` (a callable
        ``phases(on_the_fly)`` returning :class:`~host.offload.costs.KernelPhases`)."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class OnGpu(Placement):
    """The op runs as a GPU kernel, as in the baseline."""

    where = "gpu"
    offloaded = False

    def output_carrier(self, two_phase):
        return GpuCarrier(self.op)

    def work_shares(self, op, phases, two_phase):
        return []


@dataclass(frozen=True, kw_only=True)
class OnTheFly(Placement):
    """Rides on the writes of the GPU kernel ``carrier``: the kernel that writes the
    trigger (``producer``), or the GPU kernel that the trigger's NDP producer rides on
    (fusion). A two-phase kernel's apply phase follows as its own NDP work."""

    where = "on_the_fly"
    offloaded = True

    producer: str | None = None
    carrier: GpuCarrier

    def output_carrier(self, two_phase):
        return NdpCarrier(self.op) if two_phase else self.carrier

    def work_shares(self, op, phases, two_phase):
        stream, after = phases(on_the_fly=True)
        shares = [WorkShare(self.carrier, op, stream)]
        if two_phase:
            shares.append(WorkShare(NdpCarrier(self.op), op, after))
        return shares


@dataclass(frozen=True, kw_only=True)
class Standalone(Placement):
    """Standalone NDP work that reads all its operands, or (``carrier`` rooted elsewhere)
    a one-phase kernel fused into the NDP work that computes its trigger."""

    where = "ndp"
    offloaded = True

    carrier: NdpCarrier

    def output_carrier(self, two_phase):
        return self.carrier

    def work_shares(self, op, phases, two_phase):
        if self.carrier.op != self.op:
            stream, _ = phases(on_the_fly=True)        # the trigger is in the registers
            return [WorkShare(self.carrier, op, stream)]
        stream, after = phases(on_the_fly=False)
        return [WorkShare(self.carrier, op, stream if after is None else stream + after)]


# where -> placement class
PLACEMENTS = {cls.where: cls for cls in (OnGpu, OnTheFly, Standalone)}
