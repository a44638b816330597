"""Tier placement policies, one module each behind the interface of :mod:`.base`,
registered by name (:mod:`.registry`): ``ideal`` (HBM as large as the footprint), ``lru``
(demand paging alone), ``g10`` (lifetime-based migration), ``tm`` (static planning with
data splitting). Importing this package registers all four, in that order."""

from .base import PlanningContext, TierPolicy, greedy_residency
from .registry import TIER_POLICIES, register_policy, tier_policy
from .ideal import IdealPolicy
from .lru import LRUPolicy
from .uvm import UVMPolicy
from .deepum import DeepUMPolicy
from .g10 import G10Config, G10Policy, plan_g10
from .tm import TimingMonitor, TMConfig, TMPolicy, monitor_derate, plan_tm


# The registered names, in registration order.
POLICIES = tuple(TIER_POLICIES)


__all__ = ["PlanningContext", "TierPolicy", "greedy_residency", "TIER_POLICIES",
           "register_policy", "tier_policy", "POLICIES", "IdealPolicy", "LRUPolicy", "UVMPolicy", "DeepUMPolicy",
           "G10Config", "G10Policy", "plan_g10", "TMConfig", "TMPolicy", "plan_tm",
           "monitor_derate", "TimingMonitor"]
