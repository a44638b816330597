"""Invariants of every policy on hand-made graphs, and traffic that can be worked out by hand."""

import numpy as np
import pytest

from matndp.host.tier import POLICIES, TierConfig, check_plan, flash_preset, simulate
from matndp.host.tier.events import EventKind
from matndp.host.tier.plan import InfeasibleError
from matndp.host.tier.policies.tm import TMConfig, TMPolicy

from .graphs import PAGE, frozen_weight_graph, mlp_graph, split_graph


MS = 1e-3
ZSSD = flash_preset("zssd")


def run(graph, policy, *, op_s=MS, iterations=3, **tier):
    tier = tier or {"hbm_fraction": 0.5}
    return simulate(graph, np.full(len(graph.ops), op_s), TierConfig(**tier), ZSSD, policy,
                    iterations=iterations)


CASES = [
    (split_graph, {"hbm_bytes": 13 * PAGE}),
    (split_graph, {"hbm_bytes": 12 * PAGE}),
    (mlp_graph, {"hbm_fraction": 0.35}),
    (mlp_graph, {"hbm_fraction": 0.6}),
    (mlp_graph, {"hbm_fraction": 0.9}),
]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("make, tier", CASES)
def test_every_policy_keeps_the_invariants(make, tier, policy):
    try:
        result = run(make(), policy, op_s=0.1 * MS, **tier)
    except InfeasibleError as error:
        # FlashNeuron pins weights and room for the largest op's tensors: no room left here.
        assert policy == "flashneuron" and "FlashNeuron" in str(error)
        return
    # The trace check ran inside simulate (capacity at every instant, every op's tensors
    # entirely in HBM, no page dropped without a flash copy); its totals match the counters.
    totals = result.trace_totals
    assert totals["to_flash_pages"] == sum(r.counters["to_flash_pages"] for r in result.records)
    assert totals["from_flash_pages"] == sum(r.counters["from_flash_pages"] for r in result.records)
    assert totals["peak_pages"] <= result.capacity_pages
    assert totals["ops"] == len(result.records) * len(make().ops)
    metrics = result.metrics
    assert metrics["hbm_peak_bytes"] <= metrics["hbm_capacity_bytes"]
    # the reported iteration's traffic, re-derived from its events: pages written out
    # (the dirty ones of each eviction) and pages fetched
    last = [e for e in result.log if e.time_s >= result.records[-1].start_s]
    written = sum(e.dirty for e in last if e.kind is EventKind.EVICT_BEGIN) * PAGE
    fetched = sum(e.pages for e in last if e.kind is EventKind.FETCH_BEGIN) * PAGE
    assert (metrics["hbm_to_flash_bytes"], metrics["flash_to_hbm_bytes"]) == (written, fetched)
    assert metrics["flash_write_bytes"] == written and metrics["flash_read_bytes"] == fetched
    assert metrics["inter_tier_bytes"] == written + fetched
    # Time: the ops' own (given) plus the stalls, which are never negative.
    assert metrics["compute_s"] == pytest.approx(len(make().ops) * 0.1 * MS)
    assert metrics["stall_s"] >= 0
    assert metrics["iteration_s"] == pytest.approx(metrics["compute_s"] + metrics["stall_s"])
    if policy == "tm":
        for plan in result.plans:
            check_plan(plan, result.lifetimes)          # capacity holds in the plan itself
        assert metrics["demand_fetch_bytes"] == 0 and metrics["demand_evict_bytes"] == 0


@pytest.mark.parametrize("make", [split_graph, mlp_graph])
def test_ideal_moves_nothing_and_never_stalls(make):
    metrics = run(make(), "ideal").metrics
    assert metrics["inter_tier_bytes"] == 0 and metrics["stall_s"] == 0
    assert metrics["hbm_peak_bytes"] == metrics["footprint_bytes"]


def test_split_graph_traffic_worked_out_by_hand():
    """HBM of 13 pages; slots 5 and 6 need 17 (X 10, Z 6, one chain page). X is the only
    tensor those ops do not touch, so 4 of its pages must leave and come back: the least
    any policy can move is 4 pages each way."""
    four = 4 * PAGE
    tm = run(split_graph(), "tm", hbm_bytes=13 * PAGE).metrics
    assert (tm["hbm_to_flash_bytes"], tm["flash_to_hbm_bytes"]) == (four, four)
    assert tm["stall_s"] == 0                     # 1 ms ops hide 4-page transfers
    # LRU evicts exactly the 4 oldest pages when Z is allocated, and faults them back for
    # op 9: same bytes, but both transfers stall the GPU. The write-out streams at the
    # flash's program bandwidth after one program latency; the 4 faults are one batch:
    # the fault latency, one read latency, 4 pages at the read bandwidth.
    lru = run(split_graph(), "lru", hbm_bytes=13 * PAGE).metrics
    assert (lru["hbm_to_flash_bytes"], lru["flash_to_hbm_bytes"]) == (four, four)
    assert (lru["faults"], lru["fault_batches"]) == (4, 1)
    z = ZSSD
    link = TierConfig(hbm_bytes=1).link_bytes_per_s
    write_back = z.program_latency_s + four / min(link, z.program_bytes_per_s)
    fault = 45e-6 + z.read_latency_s + four / min(link, z.read_bytes_per_s)
    assert lru["stall_s"] == pytest.approx(write_back + fault)
    # G10 moves tensors whole: all 10 pages of X each way.
    g10 = run(split_graph(), "g10", hbm_bytes=13 * PAGE).metrics
    assert (g10["hbm_to_flash_bytes"], g10["flash_to_hbm_bytes"]) == (10 * PAGE, 10 * PAGE)


@pytest.mark.parametrize("policy", ["tm"])
def test_clean_pages_are_dropped_not_written(policy):
    """Same pressure as above, but the tensor is a frozen weight whose checkpoint in flash
    stays valid: the 4 pages are dropped, never written, and read back once."""
    metrics = run(frozen_weight_graph(), policy, hbm_bytes=13 * PAGE).metrics
    assert (metrics["hbm_to_flash_bytes"], metrics["flash_to_hbm_bytes"]) == (0, 4 * PAGE)


def test_uvm_moves_clean_pages_too():
    """UVM keeps no copy of a page anywhere else: the frozen weight's 4 evicted pages are
    written out like any others, and read back once."""
    metrics = run(frozen_weight_graph(), "lru", hbm_bytes=13 * PAGE).metrics
    assert (metrics["hbm_to_flash_bytes"], metrics["flash_to_hbm_bytes"]) == (4 * PAGE, 4 * PAGE)


def test_split_plan_keeps_part_of_the_tensor_in_hbm():
    result = run(split_graph(), "tm", hbm_bytes=13 * PAGE)
    (chunk,) = result.plans[-1].chunks
    assert result.lifetimes.tensor_ids[chunk.tensor] == "X"
    assert chunk.pages == 4                       # split ratio 0.4: 6 of 10 pages stay
    assert chunk.evict_due <= 5 and chunk.fetch_at >= 7      # out over slots 5 and 6


def test_tm_traffic_falls_as_hbm_grows():
    graph = mlp_graph()
    traffic = [run(graph, "tm", op_s=0.1 * MS, hbm_fraction=f).metrics["inter_tier_bytes"]
               for f in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)]
    assert all(a >= b for a, b in zip(traffic, traffic[1:])), traffic
    assert traffic[0] > 0 and traffic[-1] == 0


def test_static_plan_is_reused_unchanged():
    """Plan for iteration 2 equals the plan for iteration 3, and both iterations move the
    same bytes: nothing is re-planned from scratch."""
    for tier in ({"hbm_fraction": 0.7}, {"hbm_fraction": 0.9}):
        result = run(mlp_graph(), "tm", op_s=0.1 * MS, **tier)
        assert result.plans[1] == result.plans[2]
        second, third = result.records[1].counters, result.records[2].counters
        assert second["to_flash_pages"] == third["to_flash_pages"]
        assert second["from_flash_pages"] == third["from_flash_pages"]


def test_without_the_monitor_every_iteration_runs_the_first_plan():
    graph = mlp_graph()
    result = simulate(graph, np.full(len(graph.ops), 0.1 * MS), TierConfig(hbm_fraction=0.5),
                      ZSSD, TMPolicy(TMConfig(monitor=False)), iterations=4)
    assert len(result.plans) == 4 and all(p == result.plans[0] for p in result.plans)


def test_the_monitor_never_keeps_a_slower_plan():
    graph = mlp_graph()
    times = np.full(len(graph.ops), 0.1 * MS)
    for fraction in (0.5, 0.6):
        tier = TierConfig(hbm_fraction=fraction)
        plain = simulate(graph, times, tier, ZSSD, TMPolicy(TMConfig(monitor=False)))
        watched = simulate(graph, times, tier, ZSSD, "tm")
        assert watched.metrics["iteration_s"] <= plain.metrics["iteration_s"] * 1.02


def test_capacity_below_an_ops_working_set_is_refused():
    with pytest.raises(ValueError, match="largest single op's working set: 'use_x'"):
        run(split_graph(), "tm", hbm_bytes=11 * PAGE)


@pytest.mark.parametrize("kwargs, message", [
    ({"hbm_fraction": 0.0}, "fraction must be > 0"),
    ({"hbm_fraction": -1.0}, "fraction must be > 0"),
    ({"hbm_bytes": 0}, "capacity must be > 0"),
    ({}, "exactly one"),
    ({"hbm_bytes": 4096, "hbm_fraction": 0.5}, "exactly one"),
])
def test_bad_tier_configuration_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TierConfig(**kwargs)


def test_unknown_policy_is_refused():
    graph = split_graph()
    with pytest.raises(ValueError, match="unknown policy 'fifo'"):
        simulate(graph, np.ones(len(graph.ops)), TierConfig(hbm_fraction=1.0), ZSSD, "fifo")


def test_op_times_must_match_the_graph():
    graph = split_graph()
    with pytest.raises(ValueError, match="10 non-negative op times"):
        simulate(graph, np.ones(3), TierConfig(hbm_fraction=1.0), ZSSD, "lru")
