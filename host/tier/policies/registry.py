"""Tier policies by name: the one list of them (the command line's choices come from it)."""

__all__ = ["TIER_POLICIES", "register_policy", "tier_policy"]


# name -> policy class, in registration order (the order of tables and plots)
TIER_POLICIES = {}


def register_policy(cls):
    """Class decorator: make ``cls`` available under ``cls.name``."""
    if cls.name in TIER_POLICIES:
        raise ValueError(f"tier policy {cls.name!r} is registered twice")
    TIER_POLICIES[cls.name] = cls
    return cls


def tier_policy(name, **options):
    """A fresh policy object of the registered ``name``; ``options`` go to its class."""
    try:
        cls = TIER_POLICIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(TIER_POLICIES)}") from None
    return cls(**options)
