"""GPU HBM + host DRAM + flash: every policy under the trace check's three-tier rules
(capacity of both tiers at every instant, every access served from HBM, bytes conserved,
no page in two tiers), hand-worked traffic, and the checker catching broken logs."""

import numpy as np
import pytest

from matndp.host.tier import POLICIES, TierConfig, flash_preset, simulate
from matndp.host.tier.events import EventKind
from matndp.host.tier.plan import InfeasibleError
from matndp.host.tier.trace_check import TraceError, check_trace

from .graphs import PAGE, mlp_graph, return_graph, split_graph


ZSSD = flash_preset("zssd")


def run(graph, policy, *, op_s=1e-4, **tier):
    return simulate(graph, np.full(len(graph.ops), op_s), TierConfig(**tier), ZSSD, policy)


CASES = [
    (split_graph, {"hbm_bytes": 13 * PAGE, "host_bytes": 2 * PAGE}),
    (split_graph, {"hbm_bytes": 12 * PAGE, "host_bytes": 64 * PAGE}),
    (mlp_graph, {"hbm_fraction": 0.35, "host_bytes": 20 * PAGE}),
    (mlp_graph, {"hbm_fraction": 0.6, "host_bytes": 200 * PAGE}),
    (return_graph, {"hbm_bytes": 150 * PAGE, "host_bytes": 30 * PAGE}),
]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("make, tier", CASES)
def test_every_policy_keeps_the_three_tier_invariants(make, tier, policy):
    try:
        result = run(make(), policy, **tier)       # the trace check runs inside simulate
    except InfeasibleError as error:
        # FlashNeuron pins weights and room for the largest op's tensors: no room left here.
        assert policy == "flashneuron" and "FlashNeuron" in str(error)
        return
    totals, metrics = result.trace_totals, result.metrics
    for key in ("to_flash_pages", "from_flash_pages", "to_host_pages", "from_host_pages"):
        assert totals[key] == sum(r.counters[key] for r in result.records), key
    assert totals["host_peak_pages"] <= tier["host_bytes"] // PAGE
    assert totals["peak_pages"] <= result.capacity_pages
    last = [e for e in result.log if e.time_s >= result.records[-1].start_s]
    to_host = sum(e.host for e in last if e.kind is EventKind.EVICT_BEGIN) * PAGE
    from_host = sum(e.host for e in last if e.kind is EventKind.FETCH_BEGIN) * PAGE
    assert (metrics["hbm_to_host_bytes"], metrics["host_to_hbm_bytes"]) == (to_host, from_host)
    assert metrics["inter_tier_bytes"] == (metrics["hbm_to_host_bytes"] + metrics["host_to_hbm_bytes"]
                                           + metrics["hbm_to_flash_bytes"] + metrics["flash_to_hbm_bytes"])
    assert metrics["iteration_s"] == pytest.approx(metrics["compute_s"] + metrics["stall_s"])


def test_host_dram_takes_evictions_before_flash():
    """The split graph at HBM 13: 4 pages of X must leave (test_policies). With 64 pages of
    host DRAM every policy that fills host DRAM first sends them there and none to flash
    (g10 chooses flash or host DRAM per idle gap by its length instead)."""
    for policy in ("lru", "tm"):
        metrics = run(split_graph(), policy, hbm_bytes=13 * PAGE, host_bytes=64 * PAGE).metrics
        assert metrics["hbm_to_flash_bytes"] == metrics["flash_to_hbm_bytes"] == 0, policy
        assert metrics["hbm_to_host_bytes"] == metrics["host_to_hbm_bytes"] > 0, policy
    tm = run(split_graph(), "tm", hbm_bytes=13 * PAGE, host_bytes=64 * PAGE).metrics
    assert tm["hbm_to_host_bytes"] == 4 * PAGE


@pytest.mark.parametrize("host_pages", [0, 64])
def test_evictions_are_counted_as_demand_or_planned_with_or_without_host_dram(host_pages):
    """The 4 pages of X that leave at HBM 13: LRU evicts them when the fault needs room,
    TM ahead of time; with host DRAM the same."""
    for policy, demand, planned in (("lru", 4, 0), ("tm", 0, 4)):
        result = run(split_graph(), policy, hbm_bytes=13 * PAGE, host_bytes=host_pages * PAGE)
        counters = result.records[-1].counters
        assert (counters["demand_evict_pages"], counters["planned_evict_pages"]) == \
            (demand, planned), policy
        assert result.metrics["demand_evict_bytes"] == demand * PAGE


def test_a_full_host_dram_overflows_to_flash():
    metrics = run(split_graph(), "tm", hbm_bytes=13 * PAGE, host_bytes=1 * PAGE).metrics
    assert (metrics["hbm_to_host_bytes"], metrics["hbm_to_flash_bytes"]) == (PAGE, 3 * PAGE)


def test_ideal_is_the_same_with_or_without_host_dram():
    with_host = run(mlp_graph(), "ideal", hbm_fraction=0.5, host_bytes=64 * PAGE).metrics
    without = run(mlp_graph(), "ideal", hbm_fraction=0.5).metrics
    assert with_host["iteration_s"] == without["iteration_s"]
    assert with_host["iteration_s"] == pytest.approx(with_host["ideal_iteration_s"], rel=1e-12)


def test_a_host_tier_lowers_the_stall_of_demand_paging():
    flash_only = run(mlp_graph(), "lru", hbm_fraction=0.5).metrics
    with_host = run(mlp_graph(), "lru", hbm_fraction=0.5, host_bytes=1000 * PAGE).metrics
    assert with_host["inter_tier_bytes"] == flash_only["inter_tier_bytes"]
    assert with_host["stall_s"] < flash_only["stall_s"]


# ---- the checker on broken logs ------------------------------------------------------

def _host_run():
    return run(return_graph(), "lru", hbm_bytes=150 * PAGE, host_bytes=30 * PAGE)


def test_the_checker_catches_host_dram_over_capacity():
    result = _host_run()
    with pytest.raises(TraceError, match="host DRAM holds 30 pages, capacity 29"):
        check_trace(result.log, result.lifetimes, result.capacity_pages, 29)


def test_the_checker_catches_a_page_in_two_tiers():
    """A fetch that says its pages come from flash while host DRAM still holds them."""
    result = _host_run()
    log = [e._replace(host=0) if e.kind is EventKind.FETCH_BEGIN else e for e in result.log]
    with pytest.raises(TraceError, match="a page in two tiers"):
        check_trace(log, result.lifetimes, result.capacity_pages, 30)


def test_the_checker_catches_a_fetch_from_empty_host_dram():
    result = _host_run()
    log = [e._replace(host=0) if e.kind is EventKind.EVICT_BEGIN else e for e in result.log]
    with pytest.raises(TraceError, match="from host DRAM, which holds 0"):
        check_trace(log, result.lifetimes, result.capacity_pages, 30)


def test_a_tensor_sent_to_flash_comes_back_from_flash():
    """G10 on the split graph at HBM 13 with 1 ms ops and one page of host DRAM: X's idle
    gap (8 ms) is far above the SSD rule (about 0.13 ms for 10 pages), so X goes to flash
    whole after op 0 and is prefetched from flash, in time, before op 9: 10 pages each way
    through flash, none through host DRAM, no stall."""
    result = run(split_graph(), "g10", op_s=1e-3, hbm_bytes=13 * PAGE, host_bytes=1 * PAGE)
    metrics = result.metrics
    assert metrics["hbm_to_flash_bytes"] == metrics["flash_to_hbm_bytes"] == 10 * PAGE
    assert metrics["hbm_to_host_bytes"] == metrics["host_to_hbm_bytes"] == 0
    assert metrics["stall_s"] == 0
    x = result.lifetimes.index["X"]
    last = [e for e in result.log if e.time_s >= result.records[-1].start_s]
    assert [(e.pages, e.host) for e in last
            if e.kind is EventKind.FETCH_BEGIN and e.tensor == x] == [(10, 0)]
