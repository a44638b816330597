"""``lru``: demand paging alone (UVM-like), the executor's fallback with no plan: a missing
page faults, space is made by evicting least-recently-used pages."""

from .base import TierPolicy
from .registry import register_policy


__all__ = ["LRUPolicy"]


@register_policy
class LRUPolicy(TierPolicy):
    name = "lru"
