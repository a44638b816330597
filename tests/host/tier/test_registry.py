"""Tier policies are found by name in one registry; a policy written outside the package
runs through the same entry point as the built-in ones."""

import numpy as np
import pytest

from matndp.host.tier import POLICIES, TIER_POLICIES, TierConfig, flash_preset, simulate
from matndp.host.tier.plan import Chunk, Plan
from matndp.host.tier.policies import TierPolicy, register_policy, tier_policy

from .graphs import PAGE, split_graph


def test_the_policies_are_registered_in_order():
    assert POLICIES == ("ideal", "lru", "uvm", "deepum", "g10", "flashneuron", "g10_gds_ssd", "g10_gds_full", "tm")
    assert [TIER_POLICIES[name].name for name in POLICIES] == list(POLICIES)


@pytest.mark.parametrize("name", [None, "fifo", "TM", ""])
def test_unknown_names_are_refused_with_the_known_ones(name):
    with pytest.raises(ValueError, match=r"unknown policy .*; known: ideal, lru, uvm, deepum, g10, flashneuron, g10_gds_ssd, g10_gds_full, tm"):
        tier_policy(name)


def test_a_name_is_registered_once():
    class Again(TierPolicy):
        name = "lru"

    with pytest.raises(ValueError, match="'lru' is registered twice"):
        register_policy(Again)
    assert TIER_POLICIES["lru"] is not Again


class _EvictFourOfX(TierPolicy):
    """A strict hand-made plan for the split graph: 4 pages of X out over ops 2..7."""

    name = "four-of-x"

    def plan(self, context):
        x = context.lifetimes.index["X"]
        chunk = Chunk(x, 4, gap_after=0, evict_at=1, evict_due=2, fetch_at=8, fetch_due=9)
        return Plan(self.name, 10, context.capacity_pages, (chunk,), strict=True)


def test_a_registered_policy_runs_by_name(monkeypatch):
    monkeypatch.setitem(TIER_POLICIES, _EvictFourOfX.name, _EvictFourOfX)
    run = simulate(split_graph(), np.full(10, 1e-3), TierConfig(hbm_bytes=13 * PAGE),
                   flash_preset("zssd"), "four-of-x")
    assert run.policy == "four-of-x" and run.metrics["policy"] == "four-of-x"
    assert (run.metrics["hbm_to_flash_bytes"], run.metrics["flash_to_hbm_bytes"]) == (4 * PAGE, 4 * PAGE)
    assert run.metrics["demand_fetch_bytes"] == 0 and run.metrics["plan_chunks"] == 1
