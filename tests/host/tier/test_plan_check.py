"""The plan check: each refusal a whole message naming the chunk, its tensor and the
numbers that break the rule (hand-made chunks on the split graph: X, 10 pages, made by op
0 and read by op 9; occupancy 17 pages at ops 5 and 6)."""

import re

import pytest

from matndp.host.tier.plan import Chunk, Plan, PlanError
from matndp.host.tier.plan_check import check_plan


def x_out(lifetimes, **fields):
    """4 pages of X out from op 2 to op 8 (evicted after op 0, back for op 9)."""
    values = dict(tensor=lifetimes.index["X"], pages=4, gap_after=0, evict_at=1, evict_due=2,
                  fetch_at=8, fetch_due=9)
    return Chunk(**(values | fields))


def check(lifetimes, *chunks, capacity=13, **options):
    return check_plan(Plan("hand", 10, capacity, chunks, strict=True), lifetimes, **options)


@pytest.mark.parametrize("fields, message", [
    ({"pages": 0}, "chunk 1 (X): 0 pages of a 10-page tensor"),
    ({"pages": 11}, "chunk 1 (X): 11 pages of a 10-page tensor"),
    ({"evict_at": 0}, "chunk 1 (X): boundaries out of order 0 < 0 <= 2 < 8 <= 9"),
    ({"evict_due": 8}, "chunk 1 (X): boundaries out of order 0 < 1 <= 8 < 8 <= 9"),
    ({"fetch_at": 10}, "chunk 1 (X): boundaries out of order 0 < 1 <= 2 < 10 <= 9"),
    ({"fetch_due": 11}, "chunk 1 (X): spans more than one iteration"),
    ({"gap_after": 1, "evict_at": 2, "evict_due": 3},
     "chunk 1 (X): the gap does not start at a use of the tensor"),
    ({"fetch_due": 8}, "chunk 1 (X): op 'use_x' uses the tensor while part of it is out of HBM"),
    ({"fetch_due": 10}, "chunk 1 (X): op 'use_x' uses the tensor while part of it is out of HBM"),
])
def test_each_bad_chunk_is_named_by_number_and_tensor(split_lifetimes, fields, message):
    # A good chunk of 1 page first, so that the bad one is chunk 1.
    with pytest.raises(PlanError, match=f"^{re.escape(message)}$"):
        check(split_lifetimes, x_out(split_lifetimes, pages=1),
              x_out(split_lifetimes, **fields), capacity=17)


def test_pages_out_beyond_the_tensor_name_the_slot_and_both_counts(split_lifetimes):
    chunks = (x_out(split_lifetimes, pages=6), x_out(split_lifetimes, pages=6, evict_due=3))
    with pytest.raises(PlanError, match=r"^X: 12 pages out of HBM at slot 1, but it has only 10 "
                                        r"\(bytes not conserved\)$"):
        check(split_lifetimes, *chunks)


def test_capacity_is_checked_at_the_fullest_op(split_lifetimes):
    # 3 of X's pages out over ops 2..7: ops 5 and 6 hold 17 - 3 = 14 pages.
    with pytest.raises(PlanError, match="^capacity exceeded at op 'big': 14 pages planned in "
                                        "HBM, capacity 13$"):
        check(split_lifetimes, x_out(split_lifetimes, pages=3))
    occupancy = check(split_lifetimes, x_out(split_lifetimes, pages=3), capacity=14)
    assert list(occupancy) == [11, 12, 9, 9, 9, 14, 14, 9, 12, 12]
    unchecked = check(split_lifetimes, x_out(split_lifetimes, pages=3), require_capacity=False)
    assert list(unchecked) == list(occupancy)


def test_two_chunks_of_one_tensor_add_up(split_lifetimes):
    occupancy = check(split_lifetimes, x_out(split_lifetimes, pages=4),
                      x_out(split_lifetimes, pages=2, evict_at=3, evict_due=4, fetch_at=7))
    assert list(occupancy) == [11, 12, 8, 8, 6, 11, 11, 8, 12, 12]


def test_a_tensor_of_one_iteration_cannot_be_planned_out_into_the_next(split_lifetimes):
    # Z is made by op 5 and last read by op 6; its next "use" would be op 5 of the next
    # iteration, but Z does not live that long.
    z = split_lifetimes.index["Z"]
    with pytest.raises(PlanError, match=r"^chunk 0 \(Z\): a non-persistent tensor cannot wrap "
                                        r"into the next iteration$"):
        check(split_lifetimes, Chunk(z, 2, 6, 7, 8, 9, 15))
