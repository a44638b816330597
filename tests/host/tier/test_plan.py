"""Plans as data: the ring helpers, the residency a plan expects at iteration start, split
ratios."""

import numpy as np
import pytest

from matndp.host.tier.plan import Chunk, Plan, PlanError, ring_add, ring_values


def test_ring_add_wraps_past_the_last_slot():
    values = np.zeros(5, dtype=np.int64)
    ring_add(values, 3, 7, 2)           # slots 3, 4, 0, 1
    assert list(values) == [2, 2, 0, 2, 2]
    ring_add(values, 5, 10, 1)          # the whole ring of the next iteration
    assert list(values) == [3, 3, 1, 3, 3]
    ring_add(values, 2, 2, 9)           # empty
    assert list(values) == [3, 3, 1, 3, 3]


def test_ring_add_refuses_a_window_longer_than_the_ring():
    with pytest.raises(PlanError, match=r"window \[0, 6\) is longer than the ring of 5 slots"):
        ring_add(np.zeros(5), 0, 6, 1)


def test_ring_values_read_across_the_wrap():
    assert list(ring_values(np.arange(5), 3, 7)) == [3, 4, 0, 1]
    assert list(ring_values(np.arange(5), 4, 4)) == []


def _chunk(tensor, pages, fetch_at):
    return Chunk(tensor, pages, gap_after=7, evict_at=8, evict_due=9, fetch_at=fetch_at,
                 fetch_due=fetch_at + 1)


def test_pages_prefetched_in_the_next_iteration_are_absent_at_its_start():
    # ring of 10 slots: a prefetch at boundary 10 (= 0 of the next iteration) or later has
    # not happened when an iteration starts; one at boundary 9 has
    plan = Plan("test", 10, 100, (_chunk(0, 3, 10), _chunk(0, 2, 11), _chunk(1, 4, 9)),
                strict=True)
    assert list(plan.initial_absent(3)) == [5, 0, 0]


def test_split_ratios_per_chunk():
    plan = Plan("test", 10, 100, (_chunk(0, 3, 10), _chunk(1, 4, 9)), strict=True)
    assert plan.split_ratios(np.array([12, 4])) == [0.25, 1.0]
