"""``ideal``: HBM as large as the iteration's footprint; nothing ever moves."""

from .base import TierPolicy
from .registry import register_policy


__all__ = ["IdealPolicy"]


@register_policy
class IdealPolicy(TierPolicy):
    name = "ideal"
    uses_flash = False

    def capacity_pages(self, lifetimes, tier):
        return lifetimes.footprint_pages

    def initial_residency(self, context, plan):
        return context.lifetimes.pages.copy()
