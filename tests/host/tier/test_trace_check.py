"""The trace check: each rule refused with a message naming the time, the event, the
tensor and the counts involved; the totals of a trace through host DRAM counted by hand.

Every trace here is a few events on the split graph's X (10 pages) and Z (6 pages)."""

import re

import pytest

from matndp.host.tier.events import EventKind, TraceEvent
from matndp.host.tier.trace_check import TraceError, check_trace


K = EventKind


def trace(lifetimes, *steps):
    """Events from ``(time_s, kind, tensor name, pages, extra fields)`` tuples."""
    events = []
    for time_s, kind, name, pages, *extra in steps:
        tensor = lifetimes.index[name] if name else None
        events.append(TraceEvent(time_s, kind, tensor, pages, **(extra[0] if extra else {})))
    return events


ALLOC_X = (0.0, K.ALLOC, "X", 10)
OUT_4 = [ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 4}), (2.0, K.EVICT_END, "X", 4)]
OUT_4_TO_HOST_2 = [ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 4, "host": 2}),
                   (2.0, K.EVICT_END, "X", 4)]


@pytest.mark.parametrize("steps, message", [
    ([(1.0, K.ALLOC, "X", 10), (0.5, K.ALLOC, "Z", 6)],
     "t=0.500000000s alloc Z: time goes backwards from 1.0"),
    ([(1.0, K.ALLOC, "X", 10), (0.5, K.OP, None, 0, {"slot": 0})],
     "t=0.500000000s op op 0: time goes backwards from 1.0"),
    ([ALLOC_X, ALLOC_X], "t=0.000000000s alloc X: allocated while already in HBM"),
    ([ALLOC_X, (1.0, K.FREE, "X", 9)],
     "t=1.000000000s free X: freed with transfers in flight or a wrong page count"),
    # The right page count, but 4 pages still arriving.
    ([*OUT_4, (3.0, K.FETCH_BEGIN, "X", 4), (4.0, K.FREE, "X", 10)],
     "t=4.000000000s free X: freed with transfers in flight or a wrong page count"),
    ([ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 4}), (2.0, K.FREE, "X", 10)],
     "t=2.000000000s free X: freed with transfers in flight or a wrong page count"),
    ([ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 11, {"dirty": 11})],
     "t=1.000000000s evict_begin X: evicts 11 pages (11 dirty, 0 to host DRAM) with 10 usable"),
    ([ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 5})],
     "t=1.000000000s evict_begin X: evicts 4 pages (5 dirty, 0 to host DRAM) with 10 usable"),
    ([ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 2, "host": 3})],
     "t=1.000000000s evict_begin X: evicts 4 pages (2 dirty, 3 to host DRAM) with 10 usable"),
    ([ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 0})],
     "t=1.000000000s evict_begin X: 4 pages out of HBM but only 0 have a flash copy"),
    ([ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 3, "host": 1})],
     "t=1.000000000s evict_begin X: 4 pages out of HBM but only 3 have a flash copy or a place "
     "in host DRAM"),
    ([ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 4}), (2.0, K.EVICT_END, "X", 5)],
     "t=2.000000000s evict_end X: more pages left than were leaving"),
    ([*OUT_4, (3.0, K.FETCH_BEGIN, "X", 5)],
     "t=3.000000000s fetch_begin X: fetches 5 pages, only 4 absent with a copy elsewhere"),
    ([*OUT_4_TO_HOST_2, (3.0, K.FETCH_BEGIN, "X", 4, {"host": 3})],
     "t=3.000000000s fetch_begin X: fetches 3 pages from host DRAM, which holds 2"),
    ([*OUT_4_TO_HOST_2, (3.0, K.FETCH_BEGIN, "X", 1, {"host": 2})],
     "t=3.000000000s fetch_begin X: fetches 2 pages from host DRAM, which holds 2"),
    ([*OUT_4, (3.0, K.FETCH_BEGIN, "X", 4), (4.0, K.FETCH_END, "X", 5)],
     "t=4.000000000s fetch_end X: more pages arrived than were requested"),
    ([*OUT_4_TO_HOST_2, (3.0, K.DEMOTE, "X", 3)],
     "t=3.000000000s demote X: demotes 3 pages from host DRAM, which holds 2"),
    ([*OUT_4_TO_HOST_2, (3.0, K.DEMOTE, "X", 0)],
     "t=3.000000000s demote X: demotes 0 pages from host DRAM, which holds 2"),
    ([ALLOC_X, (1.0, K.DROP, "X", 11)], "t=1.000000000s drop X: drops 11 pages with 10 usable"),
    ([ALLOC_X, (1.0, K.DROP, "X", 4), (2.0, K.ALLOC, "X", 5)],
     "t=2.000000000s alloc X: reallocates 5 pages, 4 were dropped"),
    ([ALLOC_X, (0.0, K.ALLOC, "Z", 6)], "t=0.000000000s alloc Z: HBM holds 16 pages, capacity 15"),
    ([ALLOC_X, (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 4, "host": 4})],
     "t=1.000000000s evict_begin X: host DRAM holds 4 pages, capacity 3"),
    ([(0.0, K.INIT, "X", 10, {"host": 1})],
     "t=0.000000000s init X: 10 pages in HBM and 1 in host DRAM of a 10-page tensor: a page in "
     "two tiers"),
    ([(0.0, "bogus", "X", 1)], "t=0.000000000s: unknown event 'bogus'"),
])
def test_each_broken_rule_is_named_with_its_counts(split_lifetimes, steps, message):
    with pytest.raises(TraceError, match=f"^{re.escape(message)}$"):
        check_trace(trace(split_lifetimes, *steps), split_lifetimes, capacity_pages=15,
                    host_capacity_pages=3)


def test_a_trace_through_host_dram_counts_each_tiers_traffic(split_lifetimes):
    """4 dirty pages out, 3 of them to host DRAM and 1 to flash; 2 demoted from host DRAM
    to flash; all 4 back, 1 from host DRAM and 3 from flash; then a dropped page taken
    back and X freed (peak: X, s0 and Z, 17 pages)."""
    steps = [ALLOC_X, (0.0, K.ALLOC, "s0", 1), (1.0, K.EVICT_BEGIN, "X", 4, {"dirty": 4, "host": 3}),
             (1.5, K.EVICT_END, "X", 4), (2.0, K.DEMOTE, "X", 2),
             (3.0, K.FETCH_BEGIN, "X", 4, {"host": 1}), (3.5, K.FETCH_END, "X", 4),
             (4.0, K.OP, None, 0, {"slot": 0}), (4.0, K.ALLOC, "Z", 6),
             (5.0, K.DROP, "X", 1), (6.0, K.ALLOC, "X", 1), (7.0, K.FREE, "X", 10)]
    totals = check_trace(trace(split_lifetimes, *steps), split_lifetimes, capacity_pages=17,
                         host_capacity_pages=3)
    assert totals == {"ops": 1, "to_flash_pages": 3, "from_flash_pages": 3, "to_host_pages": 3,
                      "from_host_pages": 1, "peak_pages": 17, "host_peak_pages": 3}
