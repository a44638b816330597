"""``deepum``: DeepUM (Jung et al., ASPLOS 2023) as G10's artifact runs it — Base UVM
(:mod:`.uvm`) with correlation prefetching: before kernel i runs, the missing pages of the
tensors of kernel i + 8 (G10's prefetch degree) start moving behind the demand faults,
LRU eviction spares the tensors of the kernels in that running window, and an evicted page
of a tensor that is dead at that point (outside its live interval) is dropped, not written:
its next use allocates it afresh."""

from .registry import register_policy
from .uvm import UVMPolicy


__all__ = ["DeepUMPolicy"]


@register_policy
class DeepUMPolicy(UVMPolicy):
    name = "deepum"
    prefetch_ahead = 8
    drop_dead = True
