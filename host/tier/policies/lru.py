"""``lru``: demand paging alone, as CUDA Unified Memory does it (:mod:`host.tier.uvm`):
4 KiB pages faulted in batches while the op waits, page-granular LRU eviction."""

from ..uvm import UVMExecutor
from .base import TierPolicy
from .registry import register_policy


__all__ = ["LRUPolicy"]


@register_policy
class LRUPolicy(TierPolicy):
    name = "lru"

    def executor(self, lifetimes, op_times, capacity_pages, tier, flash_config, *,
                 initial_resident, log):
        return UVMExecutor(lifetimes, op_times, capacity_pages, tier, flash_config,
                           initial_resident=initial_resident, log=log)
