"""G10-like planning worked out by hand on the split graph (X, 10 pages, idle between ops 0
and 9; ops 5 and 6 need 17 pages), with transfer costs of round numbers: a page takes
1 µs each way, planned transfers have no fixed latency, and G10's round-trip rule sees a
20 µs SSD latency, so for X the rule is 2 × (20 + 10) + 0.5 × 10 = 65 µs; the write-out
is estimated at 10 µs and the prefetch at 1.5 × 10 = 15 µs."""

import numpy as np
import pytest

from matndp.host.graph import IterationGraph, Op
from matndp.host.tier import TierConfig, flash_preset
from matndp.host.tier.costs import TransferCosts
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk
from matndp.host.tier.policies.base import PlanningContext
from matndp.host.tier.policies.g10 import G10Policy, plan_g10

from ..graphs import (PAGE, SPLIT_WITH_V_OCCUPANCY, TWO_PAIRS_OCCUPANCY, pages, split_graph,
                      split_with_v_graph, two_pairs_graph)


US = 1e-6
COSTS = TransferCosts(read_s_per_byte=US / PAGE, write_s_per_byte=US / PAGE, read_latency_s=0.0,
                      write_latency_s=0.0, flash_latency_s=20 * US, system_latency_s=0.0)


def plan(graph, slot_us, capacity):
    lifetimes = Lifetimes(graph, PAGE)
    return lifetimes, plan_g10(lifetimes, np.array(slot_us) * US, capacity, COSTS)


def test_a_gap_shorter_than_the_rule_is_not_used():
    # 8 idle slots of 6.25 µs: 50 µs < 65 µs, however long the op that opens the gap
    _, g10 = plan(split_graph(), [100] + [6.25] * 8 + [100], capacity=13)
    assert g10.chunks == ()


def test_a_gap_longer_than_the_rule_moves_the_tensor_whole():
    """Idle 7 × 8.75 + 12 = 73.25 µs > 65 µs. The write-out (10 µs) is done by boundary 3
    (8.75 + 8.75 µs after it starts at 1); the prefetch starts at the last boundary at
    least 15 µs before op 9: boundary 7 (12 + 8.75 µs), not 8 (12 µs)."""
    lifetimes, g10 = plan(split_graph(), [100] + [8.75] * 7 + [12, 100], capacity=13)
    assert g10.chunks == (Chunk(lifetimes.index["X"], 10, gap_after=0, evict_at=1, evict_due=3,
                                fetch_at=7, fetch_due=9),)
    assert not g10.strict


def test_flash_costs_alone_make_no_third_tier():
    """The case above with the SSD's costs but no host DRAM: still the two-tier plan (a
    three-tier one would send X, idle for less than the SSD rule, to host DRAM, which
    could not hold it)."""
    lifetimes, two_tier = plan(split_graph(), [100] + [8.75] * 7 + [12, 100], capacity=13)
    times = np.array([100] + [8.75] * 7 + [12, 100]) * US
    assert plan_g10(lifetimes, times, 13, COSTS, flash_costs=SSD) == two_tier
    assert plan_g10(lifetimes, times, 13, COSTS, flash_costs=SSD, host_pages=0) == two_tier


def test_the_policy_plans_two_tiers_without_a_tier_or_without_host_dram():
    lifetimes, two_tier = plan(split_graph(), [100] + [8.75] * 7 + [12, 100], capacity=13)
    times = np.array([100] + [8.75] * 7 + [12, 100]) * US
    for tier in (None, TierConfig(hbm_bytes=13 * PAGE)):
        context = PlanningContext(lifetimes, times, 13, COSTS, tier=tier, flash=flash_preset("zssd"))
        assert G10Policy().plan(context) == two_tier


def test_an_eviction_that_relieves_no_slot_over_capacity_is_not_planned():
    """HBM of 12 pages: only slots 5 and 6 (17 pages) are over. Slots 1..5 take 1 µs each
    and slot 6 10 µs, so X's write-out is done only by boundary 7, and its prefetch starts
    at 8: the space would be free in slot 7 alone, which holds 12 pages already."""
    _, g10 = plan(split_graph(), [100, 1, 1, 1, 1, 1, 10, 50, 50, 100], capacity=12)
    assert g10.chunks == ()


def test_the_longest_gap_goes_first_and_planning_stops_when_hbm_suffices():
    # HBM of 20 pages: X alone (10 pages, idle 8 ms) relieves ops 5 and 6; V (idle 5 ms) stays
    lifetimes, g10 = plan(split_with_v_graph(), [1000] * 10, capacity=20)
    assert list(lifetimes.base_occupancy) == SPLIT_WITH_V_OCCUPANCY
    assert g10.chunks == (Chunk(lifetimes.index["X"], 10, gap_after=0, evict_at=1, evict_due=2,
                                fetch_at=8, fetch_due=9),)


def test_of_gaps_equally_long_the_first_tensors_goes_first():
    """HBM of 12 pages, 13 needed at ops 2 and 3. C and D (2 pages each) are idle longest,
    4 ms from op 0 to op 5 (far above the 45 µs rule for 2 pages); of the two, C, listed
    first, goes (written by boundary 2, prefetched from 4) and suffices."""
    lifetimes, g10 = plan(two_pairs_graph(), [1000] * 6, capacity=12)
    assert list(lifetimes.base_occupancy) == TWO_PAIRS_OCCUPANCY
    assert g10.chunks == (Chunk(lifetimes.index["C"], 2, gap_after=0, evict_at=1, evict_due=2,
                                fetch_at=4, fetch_due=5),)


# ---- three tiers: G10's choice of SSD or host memory per idle gap --------------------
# Host path: 1 µs per page each way; SSD path: 4 µs per page, 20 µs SSD latency. For X
# (10 pages) the SSD rule is 2 × (20 + 40) + 0.5 × 40 = 140 µs and the host rule
# 2 × 10 + 0.5 × 10 = 25 µs; host DRAM holds 64 pages unless a test says otherwise.
HOST = TransferCosts(read_s_per_byte=US / PAGE, write_s_per_byte=US / PAGE, read_latency_s=0.0,
                     write_latency_s=0.0, flash_latency_s=0.0, system_latency_s=0.0)
SSD = TransferCosts(read_s_per_byte=4 * US / PAGE, write_s_per_byte=4 * US / PAGE,
                    read_latency_s=0.0, write_latency_s=0.0, flash_latency_s=20 * US,
                    system_latency_s=0.0)


def plan3(graph, slot_us, capacity, host_pages=64, ssd=SSD):
    lifetimes = Lifetimes(graph, PAGE)
    return lifetimes, plan_g10(lifetimes, np.array(slot_us) * US, capacity, HOST,
                               flash_costs=ssd, host_pages=host_pages)


def test_an_idle_gap_just_above_the_ssd_rule_goes_to_the_ssd():
    """Idle 6 × 10.1 + 2 × 40 = 140.6 µs > 140 µs. The SSD's write bandwidth after op 0
    takes the 40 µs write-out by boundary 5 (4 × 10.1 µs = 40.4 µs); the prefetch, 1.5 ×
    40 = 60 µs, starts at boundary 7 (80 µs before op 9): X is out over ops 5 and 6."""
    lifetimes, g10 = plan3(split_graph(), [100] + [10.1] * 6 + [40, 40, 100], 13)
    assert g10.chunks == (Chunk(lifetimes.index["X"], 10, 0, 1, 5, 7, 9, destination="flash"),)


def test_an_idle_gap_just_below_the_ssd_rule_goes_to_host_memory():
    """Idle 6 × 9.9 + 80 = 139.4 µs < 140 µs but > 25 µs: host memory. The 10 µs
    write-out is done by boundary 3, the 15 µs prefetch starts at boundary 8."""
    lifetimes, g10 = plan3(split_graph(), [100] + [9.9] * 6 + [40, 40, 100], 13)
    assert g10.chunks == (Chunk(lifetimes.index["X"], 10, 0, 1, 3, 8, 9, destination="host"),)


def test_host_memory_too_small_for_the_tensor_keeps_it_in_hbm():
    """As above with 9 pages of host DRAM: X (10 pages) does not fit, and a gap shorter
    than the SSD rule does not go to the SSD either."""
    _, g10 = plan3(split_graph(), [100] + [9.9] * 6 + [40, 40, 100], 13, host_pages=9)
    assert g10.chunks == ()


def test_idle_gaps_around_the_host_rule():
    """Idle 6 × 2.1 + 2 × 7.6 = 27.8 µs > 25 µs: host memory, written by boundary 6 (10 µs
    take ops 1..5, 10.5 µs), prefetched from boundary 7 (15.2 µs before op 9, and 15 µs
    are needed). Idle 6 × 1.5 + 15.2 = 24.2 µs < 25 µs: not evicted."""
    lifetimes, above = plan3(split_graph(), [100] + [2.1] * 6 + [7.6, 7.6, 100], 13)
    assert above.chunks == (Chunk(lifetimes.index["X"], 10, 0, 1, 6, 7, 9, destination="host"),)
    _, below = plan3(split_graph(), [100] + [1.5] * 6 + [7.6, 7.6, 100], 13)
    assert below.chunks == ()


def test_a_gap_whose_ssd_write_bandwidth_is_taken_goes_to_host_memory():
    """SSD at 23.5 µs per page, 100 µs ops, HBM 15: X (10 pages, idle 800 µs > 587.5 µs
    SSD rule) goes first (its over-capacity area is larger) and to the SSD: its 235 µs
    write-out takes the SSD's bandwidth of ops 1 and 2 and 35 µs of op 3's. V (8 pages,
    idle 500 µs > 470 µs SSD rule) would need 188 µs of it by boundary 5, finds 65 + 100
    µs and goes to host memory instead: written by boundary 4, prefetched from boundary 7
    (12 µs before op 8). X's prefetch, 1.5 × 235 µs, starts at boundary 5."""
    slow = TransferCosts(read_s_per_byte=23.5 * US / PAGE, write_s_per_byte=23.5 * US / PAGE,
                         read_latency_s=0.0, write_latency_s=0.0, flash_latency_s=0.0,
                         system_latency_s=0.0)
    lifetimes, g10 = plan3(split_with_v_graph(), [100] * 10, 15, ssd=slow)
    assert g10.chunks == (Chunk(lifetimes.index["X"], 10, 0, 1, 4, 5, 9, destination="flash"),
                          Chunk(lifetimes.index["V"], 8, 2, 3, 4, 7, 8, destination="host"))


@pytest.mark.parametrize("host_pages, v_goes", [(10, False), (18, True)])
def test_host_memory_holds_what_earlier_gaps_put_there(host_pages, v_goes):
    """Split graph with V, 10 µs ops inside, HBM 14: X (idle 80 µs, below its 140 µs SSD
    rule) and V (idle 50 µs, below its 2 × (20 + 32) + 16 = 120 µs) go to host memory.
    X's area (10 pages x 70 µs over capacity) beats V's (8 x 50 µs): X goes first,
    written by boundary 2 and prefetched from 7 (15 µs before op 9); ops 7 and 8 are
    still over, so V is next (written by 4, prefetched from 6), but only if host memory
    has room for both: X holds 10 pages of it over V's whole gap."""
    slots = [100] + [10] * 8 + [100]
    lifetimes, g10 = plan3(split_with_v_graph(), slots, 14, host_pages=host_pages)
    x, v = lifetimes.index["X"], lifetimes.index["V"]
    expected = (Chunk(x, 10, 0, 1, 2, 7, 9, destination="host"),)
    if v_goes:
        expected += (Chunk(v, 8, 2, 3, 4, 6, 8, destination="host"),)
    assert g10.chunks == expected


def big_and_long_graph():
    """L (2 pages, made by op 0, read by op 7) and B (20 pages, made by op 1, read by op 5)
    are both idle at ops 3 and 4, where Z (5 pages) needs 28 pages; 1-page tensors chain
    the ops. L is idle longer, B over more pages.

    All-resident occupancy: 3, 24, 24, 28, 28, 24, 4, 4."""
    tensors = [pages(2, "L"), pages(20, "B"), pages(5, "Z")] + \
        [pages(1, name) for name in ("s0", "s1", "s2", "s4", "s5", "s6", "y")]
    ops = [Op("make_l", "gemm", "forward", 1, (), ("L", "s0")),
           Op("make_b", "gemm", "forward", 1, ("s0",), ("B", "s1")),
           Op("idle2", "elementwise", "forward", 1, ("s1",), ("s2",)),
           Op("big", "gemm", "forward", 1, ("s2",), ("Z",)),
           Op("use_z", "gemm", "forward", 1, ("Z",), ("s4",)),
           Op("use_b", "gemm", "backward", 1, ("B", "s4"), ("s5",)),
           Op("idle6", "elementwise", "backward", 1, ("s5",), ("s6",)),
           Op("use_l", "gemm", "backward", 1, ("L", "s6"), ("y",))]
    return IterationGraph("big-and-long", tensors, ops, batch=1, dtype="fp32")


def test_with_three_tiers_the_larger_area_goes_first_not_the_longer_gap():
    """200 µs ops, HBM 26: both gaps are above their SSD rules (L: 2 x (20 + 8) + 4 =
    60 µs < 1.2 ms; B: 2 x (20 + 80) + 40 = 240 µs < 600 µs). B's area (20 pages x 400
    µs over capacity) is ten times L's: B goes first, written by boundary 3 and
    prefetched from 4 (its 120 µs prefetch fits op 4's 200 µs), relieving op 3 alone;
    L then relieves op 4 (written by 2, prefetched from 6). Taking L first would have
    relieved both ops, and B would not have gone."""
    lifetimes, g10 = plan3(big_and_long_graph(), [200] * 8, 26)
    assert list(lifetimes.base_occupancy) == [3, 24, 24, 28, 28, 24, 4, 4]
    b, l = lifetimes.index["B"], lifetimes.index["L"]
    assert g10.chunks == (Chunk(b, 20, 1, 2, 3, 4, 5, destination="flash"),
                          Chunk(l, 2, 0, 1, 2, 6, 7, destination="flash"))
