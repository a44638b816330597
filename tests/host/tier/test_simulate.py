"""The HBM a policy runs with: the tier's capacity, all of the footprint for ideal, and a
refusal below the largest op's working set."""

import pytest

from matndp.host.tier import TierConfig
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.simulate import capacity_pages_for

from .graphs import PAGE, split_graph


def test_each_policy_runs_with_the_tiers_hbm_and_ideal_with_everything():
    lifetimes = Lifetimes(split_graph(), PAGE)
    tier = TierConfig(hbm_bytes=13 * PAGE)
    assert {policy: capacity_pages_for(lifetimes, tier, policy)
            for policy in ("lru", "g10", "tm", "ideal")} == \
        {"lru": 13, "g10": 13, "tm": 13, "ideal": 17}     # the split graph's peak is 17 pages
    # use_x reads X, s8 and writes y: 12 pages at once.
    with pytest.raises(ValueError, match=r"below the largest single op's working set: 'use_x'"):
        capacity_pages_for(lifetimes, TierConfig(hbm_bytes=11 * PAGE), "lru")
    assert capacity_pages_for(lifetimes, TierConfig(hbm_bytes=12 * PAGE), "lru") == 12
