"""G10-like planning worked out by hand on the split graph (X, 10 pages, idle between ops 0
and 9; ops 5 and 6 need 17 pages), with transfer costs of round numbers: a page takes
1 µs each way, planned transfers have no fixed latency, and G10's round-trip rule sees a
20 µs SSD latency, so for X the rule is 2 × (20 + 10) + 0.5 × 10 = 65 µs; the write-out
is estimated at 10 µs and the prefetch at 1.5 × 10 = 15 µs."""

import numpy as np

from matndp.host.tier.costs import TransferCosts
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk
from matndp.host.tier.policies.g10 import plan_g10

from ..graphs import PAGE, SPLIT_WITH_V_OCCUPANCY, split_graph, split_with_v_graph


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
