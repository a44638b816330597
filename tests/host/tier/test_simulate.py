"""The HBM a policy runs with: the tier's capacity, all of the footprint for ideal, and a
refusal below the largest op's working set."""

import numpy as np
import pytest

from matndp.host.tier import TierConfig, flash_preset
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.simulate import capacity_pages_for, simulate

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


def _run(policy, **options):
    return simulate(split_graph(), np.full(10, 1e-3), TierConfig(hbm_bytes=13 * PAGE),
                    flash_preset("zssd"), policy, **options)


def test_a_planned_run_reports_its_plan():
    """TM on the split graph: ops 5 and 6 need 17 pages of 13, and 1 ms slots carry far
    more than the 4 pages of X that leave: one chunk, a part of X, no planned stall; the
    plan never changes. Ten 1 ms ops: 10 ms ideal."""
    run = _run("tm")
    metrics = run.metrics
    assert (metrics["policy"], metrics["ideal_iteration_s"]) == ("tm", pytest.approx(10e-3))
    assert (metrics["plan_chunks"], metrics["split_chunks"], metrics["plan_changes"]) == (1, 1, 0)
    assert metrics["planned_stall_s"] == 0.0
    assert run.plans[0].chunks[0].pages == 4 and len(run.records) == 3


def test_a_run_without_a_plan_reports_no_plan_and_stops_at_the_iterations_asked():
    run = _run("lru", iterations=2)
    assert len(run.records) == 2 and run.plans == [None, None]
    assert not {"plan_chunks", "split_chunks", "planned_stall_s"} & set(run.metrics)
    assert run.metrics["plan_changes"] == 0 and run.capacity_pages == 13


@pytest.mark.parametrize("arguments, error, message", [
    ({"iterations": 0}, ValueError, "^iterations must be >= 1$"),
    ({"tier": 13 * PAGE}, TypeError, "^tier must be a TierConfig$"),
    ({"op_times": -np.ones(10)}, ValueError, r"^need 10 non-negative op times, got shape \(10,\)$"),
    ({"op_times": np.ones((2, 5))}, ValueError, r"^need 10 non-negative op times, got shape \(2, 5\)$"),
])
def test_simulate_refuses_what_cannot_run(arguments, error, message):
    options = {"op_times": np.full(10, 1e-3), "tier": TierConfig(hbm_bytes=13 * PAGE),
               "iterations": 3} | arguments
    with pytest.raises(error, match=message):
        simulate(split_graph(), options["op_times"], options["tier"], flash_preset("zssd"),
                 "lru", iterations=options["iterations"])
