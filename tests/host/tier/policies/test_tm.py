"""TM-like static planning worked out by hand: which tensor is split, by how much, when."""

from dataclasses import replace

import numpy as np
import pytest

from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk, Plan, PlanError
from matndp.host.tier.policies.tm import TMConfig, monitor_derate, plan_tm

from ..graphs import PAGE, split_graph, split_with_v_graph
from .test_g10 import COSTS, US


def test_the_tensor_used_furthest_ahead_gives_exactly_the_excess():
    """HBM of 20 pages, ops 5 and 6 need 25: X (next use op 9) and V (op 8) are idle there.
    Belady picks X, and only the 5 pages over capacity leave; with 1 ms ops the 5 µs
    write-out fits the slot after X's use and the prefetch the slot before its next use."""
    lifetimes = Lifetimes(split_with_v_graph(), PAGE)
    plan = plan_tm(lifetimes, np.full(10, 1e-3), 20, COSTS)
    assert plan.chunks == (Chunk(lifetimes.index["X"], 5, gap_after=0, evict_at=1, evict_due=2,
                                 fetch_at=8, fetch_due=9),)
    assert plan.strict and plan.planned_stall_s == (0.0,) * 10


# ---- the timing monitor's derating, on a hand-made plan: ten 1 ms slots, one chunk
# written over slots 1..2 (due at boundary 3) and read over slots 6..8 (due at 9) --------

MS = 1e-3


def monitored(stall_at, derate=None, planned_stall_s=None, chunk=None, config=TMConfig()):
    chunk = chunk or Chunk(0, 4, gap_after=0, evict_at=1, evict_due=3, fetch_at=6, fetch_due=9)
    plan = Plan("tm", 10, 13, (chunk,), strict=True, planned_stall_s=planned_stall_s)
    stall = np.zeros(10)
    for boundary, seconds in stall_at.items():
        stall[boundary] = seconds
    return monitor_derate(plan, np.ones(10) if derate is None else derate, stall,
                          np.full(10, MS), config)


def test_a_late_write_out_derates_its_own_window():
    # 2 ms late over a 2 ms window: the window had half the bandwidth planned.
    assert list(monitored({3: 2 * MS})) == [1, 0.5, 0.5, 1, 1, 1, 1, 1, 1, 1]


def test_a_late_read_derates_its_window_times_the_derate_it_had():
    derate = np.full(10, 0.5)
    new = monitored({9: 0.6 * MS}, derate=derate)       # 3 ms window, 0.6 ms late
    assert new == pytest.approx([0.5] * 6 + [0.5 * 3 / 3.6] * 3 + [0.5])
    assert list(derate) == [0.5] * 10                     # the caller's array is left alone


def test_a_window_that_wraps_around_the_iteration_is_derated_on_both_sides():
    chunk = Chunk(0, 4, gap_after=2, evict_at=3, evict_due=4, fetch_at=8, fetch_due=11)
    assert list(monitored({1: 3 * MS}, chunk=chunk)) == [0.5, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5]


def test_the_derate_never_falls_below_its_floor():
    new = monitored({9: 1000 * MS}, config=TMConfig(min_derate=0.25))
    assert list(new) == [1] * 6 + [0.25] * 3 + [1]


@pytest.mark.parametrize("stall_at, planned", [
    ({9: 0.5 * MS}, None),                   # within 5 % of the 10 ms iteration
    ({4: 5 * MS}, None),                     # late where no transfer is due
    ({9: 3.6 * MS}, 3 * MS),                 # 0.6 ms over a plan of 13 ms: within 5 %
])
def test_stall_within_tolerance_or_outside_any_window_changes_nothing(stall_at, planned):
    planned_stall_s = None if planned is None else (0.0,) * 9 + (planned,)
    assert monitored(stall_at, planned_stall_s=planned_stall_s) is None


def test_stall_beyond_tolerance_of_the_iteration_but_within_that_of_its_window_changes_nothing():
    # 0.6 ms over the whole 10 ms iteration (> 5 %), but at boundary 9 only 0.1 ms (its
    # window is 3 ms: 0.15 ms tolerance) and at boundary 5, where nothing is due, 0.5 ms.
    assert monitored({9: 0.1 * MS, 5: 0.5 * MS}) is None


# ---- the timing monitor's trials, with a stand-in planner --------------------------------

class _Planner:
    """Returns ``plans`` in turn, noting the derate it was asked for."""

    def __init__(self, *plans):
        self.plans, self.asked = list(plans), []

    def __call__(self, derate):
        self.asked.append(list(derate))
        return self.plans.pop(0)


def _plans():
    first = Plan("tm", 10, 13, (Chunk(0, 4, 0, 1, 3, 6, 9),), strict=True,
                 planned_stall_s=(0.0,) * 10)
    return first, replace(first, chunks=(Chunk(0, 4, 0, 1, 3, 5, 9),))


def _record(iteration_ms, late_ms=0.0):
    from matndp.host.tier.executor import IterationRecord
    stall = np.zeros(10)
    stall[9] = late_ms * MS
    return IterationRecord(index=0, start_s=1.0, end_s=1.0 + iteration_ms * MS, compute_s=10 * MS,
                           stall_s=late_ms * MS, stall_by_boundary=stall, counters={}, flash={})


def _monitor(planner, **config):
    from matndp.host.tier.policies.base import PlanningContext
    from matndp.host.tier.policies.tm import TimingMonitor
    context = PlanningContext(None, np.full(10, MS), 13, COSTS, check=False)
    return TimingMonitor(context, TMConfig(**config), planner)


def test_an_adjusted_plan_that_is_not_faster_is_undone_and_the_monitor_stops():
    first, adjusted = _plans()
    planner = _Planner(adjusted)
    monitor = _monitor(planner)
    assert monitor.after_iteration(first, _record(13, 3), warm_up=True) is first   # warming up
    assert monitor.after_iteration(first, _record(13, 3), warm_up=False) is adjusted
    assert planner.asked == [[1] * 6 + [0.5] * 3 + [1]]
    # The adjusted plan's iteration takes as long: the first plan comes back, for good.
    assert monitor.after_iteration(adjusted, _record(13), warm_up=False) is first
    assert list(monitor.derate) == [1] * 10
    assert monitor.after_iteration(first, _record(13, 3), warm_up=False) is first
    assert len(planner.asked) == 1


def test_a_faster_adjusted_plan_is_kept_and_adjusted_again_up_to_the_limit():
    first, adjusted = _plans()
    again = replace(adjusted, chunks=(Chunk(0, 4, 0, 1, 3, 4, 9),))
    planner = _Planner(adjusted, again)
    monitor = _monitor(planner, max_adjustments=2)
    assert monitor.after_iteration(first, _record(13, 3), warm_up=False) is adjusted
    # Faster (12 ms < 13 ms) but still 3 ms late at boundary 9: the adjusted plan's read
    # window (slots 5..8, 4 ms) is derated by 4 / 7, on top of the derate it had.
    assert monitor.after_iteration(adjusted, _record(12, 3), warm_up=False) is again
    assert planner.asked[1] == pytest.approx([1] * 5 + [4 / 7] + [0.5 * 4 / 7] * 3 + [1])
    assert monitor.after_iteration(again, _record(11, 3), warm_up=False) is again   # limit
    assert monitor.adjustments == 2


def test_a_replan_that_changes_nothing_starts_no_trial():
    first, _ = _plans()
    planner = _Planner(first)
    monitor = _monitor(planner)
    assert monitor.after_iteration(first, _record(13, 3), warm_up=False) is first
    assert (monitor.adjustments, monitor.trial) == (0, None)
    assert list(monitor.derate) == [1] * 10


def test_without_the_monitor_nothing_is_ever_replanned():
    first, adjusted = _plans()
    planner = _Planner(adjusted)
    assert _monitor(planner, monitor=False).after_iteration(first, _record(13, 3),
                                                            warm_up=False) is first
    assert planner.asked == []


# ---- pressure from pages in transit, on the split graph's planner state ------------------

def _planner_with(*chunks):
    """The planner of the split graph (HBM 13, 1 ms slots, a page 1 µs each way) with
    ``chunks`` already planned and their pages taken off the occupancy."""
    from matndp.host.tier.plan import ring_add
    from matndp.host.tier.policies.tm import _Planner
    lifetimes = Lifetimes(split_graph(), PAGE)
    planner = _Planner(lifetimes, np.full(10, MS), 13, COSTS, np.ones(10))
    for chunk in chunks:
        planner.chunks.append(chunk)
        ring_add(planner.occupancy, chunk.evict_due, chunk.fetch_at, -chunk.pages)
    return lifetimes, planner


def test_pressure_from_a_prefetch_in_flight_delays_the_largest_one():
    """Two parts of X are planned back at boundary 6, where op 6 then holds all 17 pages:
    the larger (4 pages) is fetched a slot later instead, and its read (4 µs) becomes
    planned stall at boundary 9, where X is used."""
    x = 0                                   # X is the split graph's first tensor
    large, small = Chunk(x, 4, 0, 1, 2, 6, 9), Chunk(x, 2, 0, 1, 2, 6, 9)
    lifetimes, planner = _planner_with(small, large)
    assert (lifetimes.index["X"], planner.occupancy[6]) == (x, 17)
    planner.reshape_in_transit(6)
    assert planner.chunks == [small, replace(large, fetch_at=7)]
    assert planner.occupancy[6] == 13 and list(planner.stall) == [0] * 9 + [pytest.approx(4 * US)]


def test_pressure_from_a_write_out_in_flight_brings_its_deadline_forward():
    """3 pages of X written over slots 1..6 (due at 7) are still in HBM at op 5: they are
    taken as written by it, their write (3 µs) planned stall at boundary 5."""
    chunk = Chunk(0, 3, 0, 1, 7, 8, 9)
    _, planner = _planner_with(chunk)
    planner.reshape_in_transit(5)
    assert planner.chunks == [replace(chunk, evict_due=5)]
    assert list(planner.occupancy[5:7]) == [14, 14]
    assert planner.stall[5] == pytest.approx(3 * US) and planner.stall.sum() == pytest.approx(3 * US)


def test_pressure_with_nothing_in_transit_has_no_plan():
    _, planner = _planner_with()
    with pytest.raises(PlanError, match=r"^no static plan fits HBM of 13 pages at op 'big' "
                                        r"\(17 pages needed\)$"):
        planner.reshape_in_transit(5)


def test_each_boundary_beyond_its_windows_tolerance_derates_its_window():
    # Boundary 3 is 0.05 ms late, within the 0.1 ms tolerance of its 2 ms window; boundary 9
    # is 3 ms late over its 3 ms window: only the read window is derated, to 3 / (3 + 3).
    assert list(monitored({3: 0.05 * MS, 9: 3 * MS})) == [1] * 6 + [0.5] * 3 + [1]
    # both late: both windows derated, each by its own excess
    assert list(monitored({3: 2 * MS, 9: 1 * MS})) == pytest.approx(
        [1, 0.5, 0.5, 1, 1, 1, 0.75, 0.75, 0.75, 1])


def test_the_monitor_replans_with_the_flash_share_the_first_plan_chose(monkeypatch):
    """With a host tier the first plan picks the share of evictions sent to flash; the
    timing monitor's later plans keep that share rather than choosing anew."""
    from types import SimpleNamespace

    from matndp.host.tier.policies import tm
    from matndp.host.tier.policies.base import PlanningContext
    asked = []
    monkeypatch.setattr(tm.TierPaths, "of", staticmethod(lambda tier, flash, page_bytes: "paths"))
    monkeypatch.setattr(tm, "choose_flash_share", lambda *args: (0.25, "first plan"))
    monkeypatch.setattr(tm, "plan_tm_for", lambda context, derate=None, flash_share=None:
                        asked.append((list(derate), flash_share)) or "adjusted plan")
    context = PlanningContext(SimpleNamespace(page_bytes=PAGE), np.full(10, MS), 13, COSTS,
                              check=False, tier=SimpleNamespace(host_bytes=1 << 30))
    policy = tm.TMPolicy()
    assert policy.first_plan(context) == "first plan"
    assert policy.monitor.replan(np.full(10, 0.5)) == "adjusted plan"
    assert asked == [([0.5] * 10, 0.25)]
    assert policy.run_metrics() == {"flash_share": 0.25}
