"""The plan and trace checkers catch what they are meant to catch (hand-made bad input)."""

import numpy as np
import pytest

from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk, Plan, PlanError
from matndp.host.tier.plan_check import check_plan
from matndp.host.tier.policies.tm import TMConfig, monitor_derate
from matndp.host.tier.events import EventKind, TraceEvent
from matndp.host.tier.trace_check import TraceError, check_trace

from .graphs import SPLIT_OCCUPANCY, split_graph


ALLOC, FREE, OP = EventKind.ALLOC, EventKind.FREE, EventKind.OP
EVICT_BEGIN, EVICT_END = EventKind.EVICT_BEGIN, EventKind.EVICT_END
FETCH_BEGIN, FETCH_END = EventKind.FETCH_BEGIN, EventKind.FETCH_END


@pytest.fixture(scope="module")
def lifetimes():
    return Lifetimes(split_graph(), 4096)


def plan_of(lifetimes, *chunks, capacity=13):
    return Plan("test", 10, capacity, tuple(chunks), strict=True)


def x_chunk(lifetimes, **fields):
    values = dict(tensor=lifetimes.index["X"], pages=4, gap_after=0, evict_at=1, evict_due=2,
                  fetch_at=8, fetch_due=9)
    values.update(fields)
    return Chunk(**values)


def test_a_good_plan_passes_and_gives_its_occupancy(lifetimes):
    occupancy = check_plan(plan_of(lifetimes, x_chunk(lifetimes)), lifetimes)
    expected = [o - (4 if 2 <= slot < 8 else 0) for slot, o in enumerate(SPLIT_OCCUPANCY)]
    assert list(occupancy) == expected


@pytest.mark.parametrize("fields, capacity, message", [
    ({"pages": 3}, 13, "capacity exceeded at op 'big'"),
    ({"evict_due": 6}, 13, "capacity exceeded at op 'big'"),
    ({"fetch_due": 10}, 13, "uses the tensor while part of it is out"),
    ({"fetch_due": 8}, 13, "'use_x' uses the tensor while part of it is out"),
    ({"fetch_due": 11}, 13, "spans more than one iteration"),
    ({"pages": 11}, 13, "11 pages of a 10-page tensor"),
    ({"evict_at": 0}, 13, "out of order"),
    ({"evict_due": 8}, 13, "out of order"),
    ({"gap_after": 1, "evict_at": 2, "evict_due": 3}, 13, "does not start at a use"),
])
def test_bad_plans_are_refused(lifetimes, fields, capacity, message):
    with pytest.raises(PlanError, match=message):
        check_plan(plan_of(lifetimes, x_chunk(lifetimes, **fields), capacity=capacity), lifetimes)


def test_evicting_more_than_a_tensor_holds_is_refused(lifetimes):
    plan = plan_of(lifetimes, x_chunk(lifetimes, pages=6), x_chunk(lifetimes, pages=6, evict_due=3))
    with pytest.raises(PlanError, match="12 pages out of HBM .* only 10"):
        check_plan(plan, lifetimes)


def test_a_plan_for_another_number_of_ops_is_refused(lifetimes):
    plan = Plan("hand", lifetimes.n_ops + 1, 13, (), strict=True)
    with pytest.raises(PlanError, match=f"^plan is for {lifetimes.n_ops + 1} slots, the graph "
                                        f"has {lifetimes.n_ops}$"):
        check_plan(plan, lifetimes)


def test_capacity_may_be_left_to_run_time(lifetimes):
    plan = plan_of(lifetimes, x_chunk(lifetimes, pages=1))
    with pytest.raises(PlanError):
        check_plan(plan, lifetimes)
    check_plan(plan, lifetimes, require_capacity=False)


# ---- traces ------------------------------------------------------------------------

def good_trace(lifetimes):
    """Ops 0..9 of the split graph with 4 pages of X out between ops 1 and 8."""
    index = lifetimes.index
    x = index["X"]
    log = [TraceEvent(0.0, ALLOC, x, 10), TraceEvent(0.0, ALLOC, index["s0"], 1),
           TraceEvent(0.0, OP, slot=0)]
    time = 1.0
    for slot in range(1, 10):
        op = lifetimes.graph.ops[slot]
        if slot == 1:
            log += [TraceEvent(time, EVICT_BEGIN, x, 4, dirty=4), TraceEvent(time, EVICT_END, x, 4)]
        if slot == 8:
            log += [TraceEvent(time, FETCH_BEGIN, x, 4), TraceEvent(time, FETCH_END, x, 4)]
        for name in op.outputs:
            log.append(TraceEvent(time, ALLOC, index[name], int(lifetimes.pages[index[name]])))
        log.append(TraceEvent(time, OP, slot=slot))
        for k in lifetimes.dies_after[slot]:
            log.append(TraceEvent(time + 0.5, FREE, k, int(lifetimes.pages[k])))
        time += 1.0
    # The chain pages of op 0 die after op 1, which the loop above frees at op 1.
    return _free_after_op0(log, lifetimes)


def _free_after_op0(log, lifetimes):
    freed = [TraceEvent(0.5, FREE, k, int(lifetimes.pages[k])) for k in lifetimes.dies_after[0]]
    return log[:3] + freed + log[3:]


def test_a_good_trace_passes_and_counts_its_traffic(lifetimes):
    totals = check_trace(good_trace(lifetimes), lifetimes, capacity_pages=13)
    assert totals["to_flash_pages"] == 4 and totals["from_flash_pages"] == 4
    assert totals["ops"] == 10 and totals["peak_pages"] == 13


def test_trace_over_capacity_is_caught(lifetimes):
    with pytest.raises(TraceError, match="capacity 12"):
        check_trace(good_trace(lifetimes), lifetimes, capacity_pages=12)


def test_trace_op_without_its_tensor_is_caught(lifetimes):
    log = [e for e in good_trace(lifetimes) if e.kind not in (FETCH_BEGIN, FETCH_END)]
    with pytest.raises(TraceError, match="'use_x' starts with X at 6/10 pages"):
        check_trace(log, lifetimes, capacity_pages=17)


def test_trace_dropping_dirty_pages_is_caught(lifetimes):
    log = [e._replace(dirty=0) for e in good_trace(lifetimes)]
    with pytest.raises(TraceError, match="only 0 have a flash copy"):
        check_trace(log, lifetimes, capacity_pages=13)


def test_trace_fetching_present_pages_is_caught(lifetimes):
    log = [e for e in good_trace(lifetimes) if e.kind not in (EVICT_BEGIN, EVICT_END)]
    with pytest.raises(TraceError, match="only 0 absent"):
        check_trace(log, lifetimes, capacity_pages=17)


# ---- the timing monitor --------------------------------------------------------------

def test_monitor_derates_the_window_of_a_late_transfer(lifetimes):
    plan = Plan("tm", 10, 13, (x_chunk(lifetimes, evict_due=3, fetch_at=6, fetch_due=9),),
                strict=True, planned_stall_s=(0.0,) * 10)
    times = np.full(10, 1e-3)
    stall = np.zeros(10)
    stall[9] = 3e-3           # the prefetch over slots 6..8 (3 ms) came 3 ms late
    derate = monitor_derate(plan, np.ones(10), stall, times, TMConfig())
    assert list(derate) == [1, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 1]


def test_monitor_leaves_a_plan_that_meets_its_timing(lifetimes):
    plan = Plan("tm", 10, 13, (x_chunk(lifetimes),), strict=True, planned_stall_s=(0.0,) * 10)
    stall = np.zeros(10)
    stall[9] = 0.04e-3        # below 5 % of the 10 ms iteration
    assert monitor_derate(plan, np.ones(10), stall, np.full(10, 1e-3), TMConfig()) is None
