"""TM-like static planning worked out by hand: which tensor is split, by how much, when."""

import numpy as np

from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk
from matndp.host.tier.policies.tm import plan_tm

from ..graphs import PAGE, split_with_v_graph
from .test_g10 import COSTS


def test_the_tensor_used_furthest_ahead_gives_exactly_the_excess():
    """HBM of 20 pages, ops 5 and 6 need 25: X (next use op 9) and V (op 8) are idle there.
    Belady picks X, and only the 5 pages over capacity leave; with 1 ms ops the 5 µs
    write-out fits the slot after X's use and the prefetch the slot before its next use."""
    lifetimes = Lifetimes(split_with_v_graph(), PAGE)
    plan = plan_tm(lifetimes, np.full(10, 1e-3), 20, COSTS)
    assert plan.chunks == (Chunk(lifetimes.index["X"], 5, gap_after=0, evict_at=1, evict_due=2,
                                 fetch_at=8, fetch_due=9),)
    assert plan.strict and plan.planned_stall_s == (0.0,) * 10
