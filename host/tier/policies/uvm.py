"""``uvm``: G10's Base UVM — demand paging with LRU eviction, each faulting kernel timed by
the fault-laden kernel-time model (:mod:`host.tier.fault_model`), and no tensor ever freed
(UVM gets no hint that a dead tensor's data is dead, so its pages are evicted and faulted
back like live ones). As G10's artifact runs its ``lru`` configuration: no prefetching,
evictions to host memory while it has room and to the SSD after that."""

from ..fault_model import fault_times
from ..uvm import UVMExecutor
from .base import TierPolicy
from .registry import register_policy


__all__ = ["UVMPolicy"]


@register_policy
class UVMPolicy(TierPolicy):
    name = "uvm"
    # DeepUM's prefetch degree (G10's configuration: 8); 0 for Base UVM.
    prefetch_ahead = 0
    # DeepUM drops the pages of dead tensors it evicts instead of writing them out.
    drop_dead = False

    def __init__(self, fault_laden=False):
        # False: a faulting kernel is timed as G10's artifact times it when it runs (the
        # faulting bytes at the link's and SSD's bandwidths, docs/tiering.md); True: by
        # G10's performance model over the fault-laden kernel times.
        self.fault_laden = fault_laden

    def executor(self, lifetimes, op_times, capacity_pages, tier, flash_config, *,
                 initial_resident, log):
        return UVMExecutor(lifetimes, op_times, capacity_pages, tier, flash_config,
                           initial_resident=initial_resident, log=log,
                           fault_model=fault_times(lifetimes, op_times, tier,
                                                  fault_laden=self.fault_laden),
                           keep_dead=True,
                           prefetch_ahead=self.prefetch_ahead, drop_dead=self.drop_dead)
