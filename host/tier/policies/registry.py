"""Tier policies by name: the one list of them (the command line's choices come from it)."""

from ...registry import Registry


__all__ = ["TIER_POLICIES", "register_policy", "tier_policy"]


# name -> policy class, in registration order (the order of tables and plots)
TIER_POLICIES = Registry("policy")

register_policy = TIER_POLICIES.register


def tier_policy(name, **options):
    """A fresh policy object of the registered ``name``; ``options`` go to its class."""
    return TIER_POLICIES.lookup(name)(**options)
