"""Tier placement policies, one module each behind the interface of :mod:`.base`,
registered by name (:mod:`.registry`): ``ideal`` (HBM as large as the footprint), ``lru``
(demand paging alone), ``uvm`` and ``deepum`` (G10's Base UVM and DeepUM), ``g10``
(lifetime-based migration), ``flashneuron``, ``g10_gds_ssd`` and ``g10_gds_full`` (G10's
GPUDirect-storage baselines), ``tm`` (static planning with data splitting). Importing this
package registers them, in that order."""

from .base import InfeasibleError, PlanningContext, TierPolicy, greedy_residency
from .registry import TIER_POLICIES, register_policy, tier_policy
from .ideal import IdealPolicy
from .lru import LRUPolicy
from .uvm import UVMPolicy
from .deepum import DeepUMPolicy
from .g10 import G10Config, G10Policy, plan_g10
from .flashneuron import FlashNeuronPolicy, plan_flashneuron
from .g10_gds import G10GDSFullPolicy, G10GDSSSDPolicy
from .tm import TimingMonitor, TMConfig, TMPolicy, monitor_derate, plan_tm


# The registered names, in registration order.
POLICIES = tuple(TIER_POLICIES)


__all__ = ["InfeasibleError", "PlanningContext", "TierPolicy", "greedy_residency", "TIER_POLICIES",
           "register_policy", "tier_policy", "POLICIES", "IdealPolicy", "LRUPolicy", "UVMPolicy", "DeepUMPolicy",
           "G10Config", "G10Policy", "plan_g10", "FlashNeuronPolicy", "plan_flashneuron",
           "G10GDSSSDPolicy", "G10GDSFullPolicy", "TMConfig", "TMPolicy", "plan_tm",
           "monitor_derate", "TimingMonitor"]
