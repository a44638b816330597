"""NDP offload planning and the overlapped GPU + NDP schedule of one iteration.

Placements (:mod:`.placements`), op by op in graph order:

* **gpu** — the op stays a GPU kernel (no NDP kernel for it, compute-bound, or no gain).
* **on_the_fly** — the op's last-produced input (its *trigger*) is written by a GPU kernel;
  the NDP units see those writes and compute on the data in flight, so the trigger is
  never re-read. The kernel rides on the producer: the producer's duration stretches if
  the NDP cannot keep pace (the trigger queue back-pressures the GPU). Kernels that need a
  whole-tensor reduction before they can apply it (normalization, softmax) accumulate
  statistics on the fly and run their apply phase afterwards as standalone NDP work.
* **ndp** — standalone NDP work: the trigger was written by the NDP itself (NDP writes
  pass no filter) or by no op of the iteration; the NDP reads all operands.

The planner (:mod:`.planner`) decides, the offload policy (:mod:`.policies`: ``auto``,
``all``, ``none``) screens, the schedule (:mod:`.schedule`) overlaps the two queues. The
memory placement (:mod:`.memory`: ``local``, ``expander``) says where the tensors and the
NDP slices sit, and so what GPU kernels and NDP work cost.
"""

from .costs import KernelPhases, OffloadCosts, WorkCost
from .memory import (MEMORY_PLACEMENTS, ExpanderMemory, LocalMemory, MemoryPlacement,
                     memory_placement)
from .placements import (PLACEMENTS, GpuCarrier, NdpCarrier, OnGpu, OnTheFly, Placement,
                         Standalone)
from .planner import PlannerConfig, plan_offload
from .policies import OFFLOAD_POLICIES, OffloadPolicy, offload_policy, register_offload_policy
from .records import BandwidthSegment, Busy, Plan, ScheduledOp


# The registered offload policy names, in registration order.
POLICIES = tuple(OFFLOAD_POLICIES)


__all__ = ["PlannerConfig", "plan_offload", "Plan", "ScheduledOp", "Busy", "BandwidthSegment",
           "Placement", "OnGpu", "OnTheFly", "Standalone", "PLACEMENTS", "GpuCarrier",
           "NdpCarrier", "OffloadPolicy", "OFFLOAD_POLICIES", "offload_policy",
           "register_offload_policy", "POLICIES", "OffloadCosts", "KernelPhases", "WorkCost",
           "MemoryPlacement", "LocalMemory", "ExpanderMemory", "MEMORY_PLACEMENTS",
           "memory_placement"]
