"""TM planning over HBM, host DRAM and flash, worked out by hand: the split between host
DRAM and flash, transfers issued in pieces of each slot's budget, the ratio search, and
the planner's inputs refused when they make no sense.

Round-number machine: a page crosses the link (to host DRAM or on its way to flash) in
1 µs each way and is read or programmed by flash in 4 µs; no fixed latencies."""

from dataclasses import replace

import numpy as np
import pytest

from matndp.host.tier import TierConfig, simulate
from matndp.host.tier.flash import flash_preset
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk, PlanError
from matndp.host.tier.plan_check import check_plan
from matndp.host.tier.policies.tm_tiers import (TierPaths, choose_flash_share,
                                                least_flash_share, plan_tm_tiers)

from ..graphs import (PAGE, SPLIT_OCCUPANCY, SPLIT_WITH_V_OCCUPANCY, split_graph,
                      split_with_v_graph, TWO_PAIRS_OCCUPANCY, two_pairs_graph)


US = 1e-6
PATHS = TierPaths(link_page_s=1 * US, host_page_s=1 * US, flash_write_page_s=4 * US,
                  flash_read_page_s=4 * US, host_latency_s=0.0, flash_write_latency_s=0.0,
                  flash_read_latency_s=0.0, link_duplex=True, flash_duplex=True, host_pages=64)


def plan(graph, slot_us, capacity, share, **paths):
    lifetimes = Lifetimes(graph, PAGE)
    result = plan_tm_tiers(lifetimes, np.array(slot_us) * US, capacity,
                           replace(PATHS, **paths), flash_share=share)
    check_plan(result, lifetimes)                 # capacity at every slot, bytes conserved
    return lifetimes, result


def test_with_room_in_host_dram_the_excess_goes_there_whole():
    """HBM of 20 pages, ops 5 and 6 need 25 (X, next use op 9, and V, op 8, idle there).
    Belady picks X and its 5 excess pages go to host DRAM: written in op 1's slot (1 ms
    carries 1000 pages), read back in op 8's."""
    lifetimes, result = plan(split_with_v_graph(), [1000] * 10, 20, share=0.0)
    assert list(lifetimes.base_occupancy) == SPLIT_WITH_V_OCCUPANCY
    assert result.chunks == (Chunk(lifetimes.index["X"], 5, gap_after=0, evict_at=1,
                                   evict_due=2, fetch_at=8, fetch_due=9, destination="host"),)
    assert result.strict and sum(result.planned_stall_s) == 0


def test_the_ratio_splits_a_tensor_between_flash_and_host_dram():
    """Host DRAM of 2 pages holds 2 of the 5 pages that must leave: the least ratio is
    1 - 2/5 = 0.6, and at 0.6 flash takes round(0.6 x 5) = 3 pages and host DRAM the
    other 2, both written in op 1's slot and read in op 8's."""
    lifetimes = Lifetimes(split_with_v_graph(), PAGE)
    assert least_flash_share(lifetimes, 20, 2) == pytest.approx(0.6)
    _, result = plan(split_with_v_graph(), [1000] * 10, 20, share=0.6, host_pages=2)
    x = lifetimes.index["X"]
    assert sorted(result.chunks, key=lambda c: c.destination) == [
        Chunk(x, 3, 0, 1, 2, 8, 9, destination="flash"),
        Chunk(x, 2, 0, 1, 2, 8, 9, destination="host")]


@pytest.mark.parametrize("capacity, host_pages, share", [
    (25, 0, 0.0),          # the fullest slot fits: nothing must leave
    (30, 0, 0.0),
    (20, 0, 1.0),          # no host DRAM: everything to flash
    (20, 5, 0.0),          # host DRAM holds the whole excess ...
    (20, 50, 0.0),         # ... or more than it
    (21, 1, 0.75),         # 4 pages must leave, host DRAM holds 1
])
def test_the_least_flash_share_is_what_host_dram_cannot_hold(capacity, host_pages, share):
    lifetimes = Lifetimes(split_with_v_graph(), PAGE)        # fullest slots: 25 pages
    assert least_flash_share(lifetimes, capacity, host_pages) == pytest.approx(share)


def test_a_transfer_is_issued_in_pieces_of_each_slots_budget():
    """Split graph, HBM 13: ops 5 and 6 need 17, so 4 pages of X leave, all to flash (no
    host DRAM). Ops 1..4 take 4 µs: each slot's flash budget programs one page, so the
    write-out is four 1-page pieces issued at boundaries 1, 2, 3 and 4. Ops 7 and 8 take
    8 µs, two pages each: the read-back is two 2-page pieces at boundaries 7 and 8."""
    slots = [1000, 4, 4, 4, 4, 1000, 1000, 8, 8, 1000]
    lifetimes, result = plan(split_graph(), slots, 13, share=1.0, host_pages=0)
    assert list(lifetimes.base_occupancy) == SPLIT_OCCUPANCY
    x = lifetimes.index["X"]
    assert result.chunks == (Chunk(x, 1, 0, 1, 2, 7, 9, "flash"), Chunk(x, 1, 0, 2, 3, 7, 9, "flash"),
                             Chunk(x, 1, 0, 3, 4, 8, 9, "flash"), Chunk(x, 1, 0, 4, 5, 8, 9, "flash"))
    assert sum(result.planned_stall_s) == 0


def test_what_the_budgets_cannot_carry_is_planned_stall():
    """As above, but ops 7 and 8 take 4 µs: one page of read budget each. The read-back of
    the 4 pages takes them and lands the other 2 early, at boundary 6 (allowed: slot 6 can
    still give up X's other 6 pages). Slot 6 is then 2 over; relieving it in turn, X's
    next 2 pages are written in op 5's 1 ms but have no read budget left before op 9:
    they are read just in time, 2 x 4 µs of planned stall at boundary 9."""
    slots = [1000, 4, 4, 4, 4, 1000, 1000, 4, 4, 1000]
    lifetimes, result = plan(split_graph(), slots, 13, share=1.0, host_pages=0)
    x = lifetimes.index["X"]
    assert result.chunks == (Chunk(x, 1, 0, 1, 2, 6, 9, "flash"), Chunk(x, 1, 0, 2, 3, 6, 9, "flash"),
                             Chunk(x, 1, 0, 3, 4, 7, 9, "flash"), Chunk(x, 1, 0, 4, 5, 8, 9, "flash"),
                             Chunk(x, 2, 0, 5, 6, 9, 9, "flash"))
    stall = np.array(result.planned_stall_s)
    assert stall[9] == pytest.approx(8 * US) and stall.sum() == pytest.approx(8 * US)


def test_the_ratio_search_starts_at_the_least_share_and_stops_when_stall_stops_falling():
    """With host DRAM for everything, the least ratio is 0 and its plan has no stall:
    the search stops there, and nothing goes to flash."""
    lifetimes = Lifetimes(split_with_v_graph(), PAGE)
    share, result = choose_flash_share(lifetimes, np.full(10, 1e-3), 20, PATHS)
    assert share == 0.0 and {c.destination for c in result.chunks} == {"host"}


def test_tm_over_three_tiers_runs_as_planned():
    """The planned transfers, executed: no stall beyond the plan's (none), the 5 pages of
    X to host DRAM and back, nothing to flash; the trace check runs inside simulate."""
    tier = TierConfig(hbm_bytes=20 * PAGE, host_bytes=64 * PAGE)
    run = simulate(split_with_v_graph(), np.full(10, 1e-3), tier, flash_preset("zssd"), "tm")
    metrics = run.metrics
    assert metrics["stall_s"] == 0 and metrics["planned_stall_s"] == 0
    assert metrics["flash_share"] == 0.0
    assert metrics["hbm_to_host_bytes"] == metrics["host_to_hbm_bytes"] == 5 * PAGE
    assert metrics["hbm_to_flash_bytes"] == metrics["flash_to_hbm_bytes"] == 0


def test_tier_paths_come_from_the_tier_and_flash_configuration():
    tier = TierConfig(hbm_bytes=20 * PAGE, host_bytes=64 * PAGE, link_bytes_per_s=PAGE / US,
                      request_overhead_s=2 * US, host_latency_s=3 * US, link_duplex=False)
    flash = replace(flash_preset("zssd"), duplex=True)
    paths = TierPaths.of(tier, flash, PAGE)
    assert paths.link_page_s == pytest.approx(US) and paths.host_pages == 64
    assert paths.flash_read_page_s == pytest.approx(PAGE / flash.read_bytes_per_s)
    assert paths.host_latency_s == pytest.approx(5 * US)
    assert paths.flash_read_latency_s == pytest.approx(2 * US + flash.read_latency_s + US)
    assert (paths.link_duplex, paths.flash_duplex) == (False, True)


@pytest.mark.parametrize("field, value, message", [
    ("link_page_s", 0.0, "link_page_s must be positive"),
    ("flash_read_page_s", -1.0, "flash_read_page_s must be positive"),
    ("host_latency_s", -1e-6, "host_latency_s must not be negative"),
    ("host_pages", -1, "host_pages must be an integer >= 0"),
    ("host_pages", 1.5, "host_pages must be an integer >= 0"),
])
def test_bad_tier_paths_are_refused_by_name(field, value, message):
    with pytest.raises(ValueError, match=message):
        replace(PATHS, **{field: value})


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_a_flash_share_outside_zero_to_one_is_refused(share):
    with pytest.raises(ValueError, match="flash share must be within"):
        plan(split_graph(), [1000] * 10, 13, share=share)


# ---- pressure from pages in transit, on the split graph's planner state ------------------

def _planner_with(*chunks, slot_us=(1000,) * 10, **paths):
    """The three-tier planner of the split graph (HBM 13, 1 ms slots unless ``slot_us``
    says otherwise) with ``chunks`` already planned and their pages taken off the
    occupancy."""
    from matndp.host.tier.plan import ring_add
    from matndp.host.tier.policies.tm_tiers import _TieredPlanner
    lifetimes = Lifetimes(split_graph(), PAGE)
    planner = _TieredPlanner(lifetimes, np.array(slot_us) * US, 13, replace(PATHS, **paths),
                             np.ones(10), 1.0)
    for chunk in chunks:
        planner.chunks.append(chunk)
        ring_add(planner.occupancy, chunk.evict_due, chunk.fetch_at, -chunk.pages)
    return planner


X = 0                       # the split graph's first tensor


@pytest.mark.parametrize("over, flash_fetch_at, host_fetch_at, stall_us", [
    (4, 9, 6, 4 * 4),               # the larger part, from flash (4 µs a page), is enough
    (5, 9, 9, 4 * 4 + 2 * 1),       # then the host part too (1 µs a page)
])
def test_pressure_from_prefetches_in_flight_reads_the_largest_parts_just_in_time(
        over, flash_fetch_at, host_fetch_at, stall_us):
    flash, host = Chunk(X, 4, 0, 1, 2, 6, 9, "flash"), Chunk(X, 2, 0, 1, 2, 6, 9, "host")
    planner = _planner_with(host, flash)
    assert planner.occupancy[6] == 17
    planner.reshape_in_transit(6, over)
    assert planner.chunks == [replace(host, fetch_at=host_fetch_at),
                              replace(flash, fetch_at=flash_fetch_at)]
    assert planner.stall[9] == pytest.approx(stall_us * US) and planner.stall.sum() == \
        pytest.approx(stall_us * US)
    # Host DRAM keeps the host part until it is read.
    assert list(planner.host_occupancy) == [0] * 6 + [2 * (host_fetch_at == 9)] * 3 + [0]
    assert planner.occupancy[6] == 17 - 4 - 2 * (host_fetch_at == 9)


def test_pressure_from_a_write_out_in_flight_takes_it_as_written():
    chunk = Chunk(X, 3, 0, 1, 7, 8, 9, "flash")
    planner = _planner_with(chunk)
    planner.reshape_in_transit(5, 3)
    assert planner.chunks == [replace(chunk, evict_due=5)]
    assert list(planner.occupancy[5:7]) == [14, 14]
    assert planner.stall[5] == pytest.approx(3 * 4 * US)


def test_pressure_that_parts_in_transit_cannot_relieve_has_no_plan():
    # A part back before op 5 is not in transit there.
    planner = _planner_with(Chunk(X, 4, 0, 1, 2, 3, 4, "flash"))
    with pytest.raises(PlanError, match=r"^no static plan fits HBM of 13 pages at op 'big' "
                                        r"\(17 pages needed\)$"):
        planner.reshape_in_transit(5, 4)


@pytest.mark.parametrize("capacity, pages, allowed", [
    ([3, 3, 3], 8, [3, 3, 2]),              # the budgets, latest first, until all are read
    ([10, 10, 10], 20, [10, 1, 0]),         # op 8 could give up 11 pages, op 6 only 6
    ([2.5, 2.9999999999, 0], 9, [2, 3, 0]),  # whole pages; a hair below one counts as one
])
def test_reads_land_no_earlier_than_the_slots_they_pass_can_give_up(capacity, pages, allowed):
    """Reading X (gap after op 0, used by op 9) back over slots 8, 7, 6 with nothing yet
    planned: each slot could still give up X's 10 pages, so slots 7 and 8 (12 pages of 13)
    have room for 11 early pages, slot 6 (17 pages) for 6; pages read in a slot stay
    in HBM in every later slot."""
    planner = _planner_with()
    assert list(planner.landing(np.array(capacity, dtype=float), 5, 9, pages)) == allowed


@pytest.mark.parametrize("slot_us, paths, flash, host", [
    # 1 ms slots carry 250 flash pages or 1000 host pages: all of X's 10 pages fit.
    ((1000,) * 10, {}, 10, 10),
    # Ops 1..4 of 4 µs write one flash page each: 4 pages (host DRAM: 16, X has 10).
    ((1000, 4, 4, 4, 4, 1000, 1000, 1000, 1000, 1000), {}, 4, 10),
    # Ops 6..8 of 4 µs read one flash page each after op 5: 3 pages.
    ((1000,) * 6 + (4, 4, 4, 1000), {}, 3, 10),
    # Host DRAM of 3 pages.
    ((1000,) * 10, {"host_pages": 3}, 10, 3),
    # Reads from flash take 20 µs to start: the 12 µs of ops 6..8 are too late.
    ((1000,) * 6 + (4, 4, 4, 1000), {"flash_read_latency_s": 20 * US}, 0, 10),
])
def test_how_much_of_x_fits_each_path_at_op_5(slot_us, paths, flash, host):
    planner = _planner_with(slot_us=slot_us, **paths)
    fits = {path: planner.fits(path, np.array([0]), np.array([5]))[0] for path in ("flash", "host")}
    assert fits == {"flash": flash, "host": host}


@pytest.mark.parametrize("host_pages, path, page_us", [(64, "host", 1), (0, "flash", 4)])
def test_with_no_budget_anywhere_the_cheapest_path_goes_as_planned_stall(host_pages, path, page_us):
    """Ops of no time carry nothing: relieving op 5 by 4 pages of X, the part is written
    out in op 5's boundary and read just in time for op 9, each way as planned stall:
    host DRAM (1 µs a page) when it has room, else flash (4 µs)."""
    planner = _planner_with(slot_us=(0,) * 10, host_pages=host_pages)
    planner.fallback(np.array([0]), np.array([5]), 4, 5)
    assert planner.chunks == [Chunk(X, 4, 0, 1, 5, 9, 9, path)]
    assert (planner.stall[5], planner.stall[9]) == pytest.approx((4 * page_us * US, 4 * page_us * US))
    assert list(planner.occupancy) == [11, 12, 12, 12, 12, 13, 13, 8, 8, 12]
    in_host = 4 if path == "host" else 0
    assert list(planner.host_occupancy) == [0] + [in_host] * 8 + [0]


# ---- pipes shared by both directions, planned stall with latencies, Belady ties ----------

@pytest.mark.parametrize("link_duplex, flash_duplex, written, pages, read, left", [
    # Slots of 4 µs: the link carries 4 pages each way (1 µs a page), flash one (4 µs).
    (True, True, "host", 3, "host", 4),        # a duplex link: the way in keeps its 4 pages
    (False, True, "host", 3, "host", 1),       # a simplex link: 4 µs − 3 µs leaves 1 page
    (False, True, "host", 4, "flash", 0),      # ... shared with the link's part of a flash read
    (True, True, "flash", 1, "flash", 1),      # a duplex device: its reads keep 4 µs
    (True, False, "flash", 1, "flash", 0),     # a simplex device: the program took its 4 µs
    (False, False, "flash", 1, "host", 3),     # the flash write took 1 µs of the link
])
def test_a_pipe_that_is_not_duplex_has_one_budget_for_both_directions(
        link_duplex, flash_duplex, written, pages, read, left):
    planner = _planner_with(slot_us=(4,) * 10, link_duplex=link_duplex, flash_duplex=flash_duplex)
    assert list(planner.carry((read, "in"), 3, 4)) == [4 if read == "host" else 1]
    planner.consume((written, "out"), [3], [pages])
    assert list(planner.carry((read, "in"), 3, 4)) == pytest.approx([left])
    # Other slots keep their budgets.
    assert list(planner.carry((read, "in"), 2, 3)) == [4 if read == "host" else 1]


@pytest.mark.parametrize("slot_us, path, stall_us", [
    # Ops of no time carry nothing: 4 pages out and 4 back, each way pages x the slowest
    # pipe's time plus that way's latency (write 3 µs, read 5 µs, host 2 µs).
    ((0,) * 10, "flash", (4 * 4 + 3) + (4 * 4 + 5)),
    ((0,) * 10, "host", (4 * 1 + 2) + (4 * 1 + 2)),
    # Ops 1..4 of 4 µs program one page each: the write-out fits and costs nothing; only
    # the read-back is stall.
    ((0, 4, 4, 4, 4, 0, 0, 0, 0, 0), "flash", 4 * 4 + 5),
    # ... and one page of read budget in each of ops 7 and 8 leaves 2 pages to stall.
    ((0, 4, 4, 4, 4, 0, 0, 4, 4, 0), "flash", 2 * 4 + 5),
    # All 4 pages carried both ways: no stall, and no latency either.
    ((0, 4, 4, 4, 4, 0, 0, 8, 8, 0), "flash", 0),
])
def test_the_planned_stall_of_a_part_counts_each_ways_latency(slot_us, path, stall_us):
    planner = _planner_with(slot_us=slot_us, flash_write_latency_s=3 * US,
                            flash_read_latency_s=5 * US, host_latency_s=2 * US)
    assert (planner.lo[X], planner.hi[X]) == (1, 9)
    assert planner.partial_stall(X, path, 4, 5) == pytest.approx(stall_us * US)


def test_with_no_budget_the_fallback_weighs_each_paths_latency_too():
    """As the fallback above, but host DRAM takes 100 µs to start a transfer: 4 pages cost
    (4 + 100) µs each way there and 4 x 4 µs each way to flash, so flash goes."""
    planner = _planner_with(slot_us=(0,) * 10, host_latency_s=100 * US)
    planner.fallback(np.array([0]), np.array([5]), 4, 5)
    assert planner.chunks == [Chunk(X, 4, 0, 1, 5, 9, 9, "flash")]
    assert (planner.stall[5], planner.stall[9]) == pytest.approx((16 * US, 16 * US))
    assert not planner.host_occupancy.any()


def test_of_tensors_idle_equally_long_the_first_listed_leaves():
    """HBM of 12 pages, 13 needed at ops 2 and 3: one page must leave. C and D are idle
    longest (next use op 5); of the two, C comes first, and its page goes to host DRAM:
    written in op 1's slot, read in op 4's."""
    lifetimes, result = plan(two_pairs_graph(), [1000] * 6, 12, share=0.0)
    assert list(lifetimes.base_occupancy) == TWO_PAIRS_OCCUPANCY
    assert result.chunks == (Chunk(lifetimes.index["C"], 1, gap_after=0, evict_at=1,
                                   evict_due=2, fetch_at=4, fetch_due=5, destination="host"),)
