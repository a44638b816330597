"""``uvm`` and ``deepum``, G10's Base UVM and DeepUM, on small graphs worked out by hand:
dead tensors kept (``uvm``) or dropped (``deepum``), faulting kernels timed at the link's
bandwidth over their own time, host DRAM demoting its oldest pages to flash."""

import numpy as np
import pytest

from matndp.host.graph import IterationGraph, Op
from matndp.host.tier import TierConfig, flash_preset, simulate
from matndp.host.tier.events import EventKind

from .graphs import PAGE, pages


ZSSD = flash_preset("zssd")
OP_S = 1e-3
LINK = 16e9


def chain():
    """A (40 pages) made by op 0 and read by op 1, then B (40) made by op 2 and read by
    op 3: with HBM of 60 pages, A must leave before B is made."""
    tensors = [pages(40, "A"), pages(40, "B"), pages(1, "x", "input")]
    ops = [Op("make_a", "gemm", "forward", 1, ("x",), ("A",)),
           Op("use_a", "gemm", "forward", 1, ("A",), ()),
           Op("make_b", "gemm", "forward", 1, ("x",), ("B",)),
           Op("use_b", "gemm", "backward", 1, ("B",), ())]
    return IterationGraph("chain", tensors, ops, batch=1, dtype="fp32")


def run(policy, **tier):
    config = TierConfig(**({"hbm_bytes": 60 * PAGE, "link_bytes_per_s": LINK,
                            "host_bytes": 1000 * PAGE} | tier))
    return simulate(chain(), np.full(4, OP_S), config, ZSSD, policy)


def test_uvm_keeps_dead_tensors_and_moves_them_at_link_bandwidth():
    """A, B (40 pages each) and x (1) never die, 81 pages on 60: 21 pages are always out.
    Steady state at op 0 (make_a): 21 of A are in host DRAM; A is written, so they fault
    back, and 21 of B (the least recently used) go to host DRAM. Op 2 (make_b) does the
    same the other way. Each faulting op runs for its time plus its 21 faulting pages at
    the link's bandwidth (G10's model as its artifact runs it; the write-out streams the
    other way at once): 2 × 21 pages each way per iteration."""
    result = run("uvm")
    metrics = result.metrics
    assert metrics["host_to_hbm_bytes"] == metrics["hbm_to_host_bytes"] == 42 * PAGE
    assert metrics["flash_to_hbm_bytes"] == metrics["hbm_to_flash_bytes"] == 0
    assert metrics["stall_s"] == pytest.approx(42 * PAGE / LINK, rel=1e-9)
    assert metrics["iteration_s"] == pytest.approx(4 * OP_S + 42 * PAGE / LINK, rel=1e-9)
    # Every page that moves is a demand fault or a demand eviction, HBM is full at each
    # faulting op, and flash sees nothing.
    record = result.records[-1]
    assert record.counters == {
        "to_flash_pages": 0, "from_flash_pages": 0, "to_host_pages": 42, "from_host_pages": 42,
        "demand_fetch_pages": 42, "demand_evict_pages": 42, "planned_evict_pages": 0,
        "planned_fetch_pages": 0, "dropped_clean_pages": 0, "faults": 42, "fault_batches": 0,
        "peak_pages": 60, "demoted_pages": 0}
    assert record.flash == {"page_reads": 0, "page_programs": 0, "read_requests": 0,
                            "program_requests": 0, "bus_bytes": 0, "energy_j": 0.0}


def test_deepum_drops_dead_pages_instead_of_writing_them():
    """DeepUM evicts A at op 2, where A is dead: its pages are dropped, not written, and
    op 0 of the next iteration allocates them again; B, dead after op 3, is dropped the same
    way. Nothing crosses the link. Each op's prefetch (k = 8 ahead, on a 4-op ring, two
    iterations ahead) re-allocates the dropped pages of the op after it in time, so the
    allocation is charged to the op that needs the space (at the link's bandwidth)."""
    result = run("deepum")
    metrics = result.metrics
    assert metrics["inter_tier_bytes"] == 0
    last = [e for e in result.log if e.time_s >= result.records[-1].start_s]
    assert {e.kind for e in last} >= {EventKind.DROP, EventKind.ALLOC}
    assert not [e for e in last if e.kind is EventKind.EVICT_BEGIN]
    # 60 pages hold x and 59 of A and B: 21 pages of the dead one make room for the other,
    # and come back as allocations; no counter moves but the full HBM's peak.
    names = result.lifetimes.tensor_ids
    assert [(e.kind, names[e.tensor], e.pages) for e in last
            if e.kind in (EventKind.DROP, EventKind.ALLOC)] == [
        (EventKind.DROP, "B", 21), (EventKind.ALLOC, "A", 21),
        (EventKind.DROP, "A", 21), (EventKind.ALLOC, "B", 21)]
    counters = result.records[-1].counters
    assert counters["peak_pages"] == 60 and set(counters.values()) == {0, 60}


def three():
    """A, B, C (40 pages each) made and read in turn, never freed: 121 pages on 60."""
    tensors = [pages(40, name) for name in "ABC"] + [pages(1, "x", "input")]
    ops = []
    for name in "ABC":
        ops += [Op(f"make_{name}", "gemm", "forward", 1, ("x",), (name,)),
                Op(f"use_{name}", "gemm", "forward", 1, (name,), ())]
    return IterationGraph("three", tensors, ops, batch=1, dtype="fp32")


def test_a_full_host_dram_demotes_its_oldest_pages_to_flash():
    """61 pages are always out of HBM, host DRAM holds 50: it is full whenever an op
    evicts. With demotion its least recently stored pages (of tensors the op does not
    touch) move on to flash first and every eviction lands in host DRAM; without, the
    evictions that do not fit go to flash themselves (host pages of the tensor being
    faulted back are not demoted, so some still do). The trace check (host capacity, no
    page in two tiers) holds for both."""
    config = dict(hbm_bytes=60 * PAGE, host_bytes=50 * PAGE, link_bytes_per_s=LINK)
    runs = {demotes: simulate(three(), np.full(6, OP_S), TierConfig(**config, host_demotes=demotes),
                              ZSSD, "uvm")
            for demotes in (True, False)}
    share = {}
    for demotes, result in runs.items():
        last = [e for e in result.log if e.time_s >= result.records[-1].start_s]
        evicted = sum(e.pages for e in last if e.kind is EventKind.EVICT_BEGIN)
        to_host = sum(e.host for e in last if e.kind is EventKind.EVICT_BEGIN)
        demoted = [e for e in last if e.kind is EventKind.DEMOTE]
        share[demotes] = to_host / evicted
        # The counters and the flash's requests agree with the log: demoted pages are
        # written to flash like evictions that go there directly.
        counters, flash = result.records[-1].counters, result.records[-1].flash
        fetched = [e for e in last if e.kind is EventKind.FETCH_BEGIN]
        from_host = sum(e.host for e in fetched)
        moved_on = sum(e.pages for e in demoted)
        assert (counters["demoted_pages"], counters["to_host_pages"]) == (moved_on, to_host)
        assert counters["to_flash_pages"] == evicted - to_host + moved_on == flash["page_programs"]
        assert counters["demand_evict_pages"] == evicted
        assert counters["demand_fetch_pages"] == sum(e.pages for e in fetched) == counters["faults"]
        assert counters["from_host_pages"] == from_host
        assert counters["from_flash_pages"] == counters["demand_fetch_pages"] - from_host \
            == flash["page_reads"]
        if demotes:
            assert demoted
            ops = [e for e in last if e.kind is EventKind.OP]
            for event in demoted:
                slot = max(op.slot for op in ops if op.time_s <= event.time_s) + 1 \
                    if any(op.time_s <= event.time_s for op in ops) else 0
                working = result.lifetimes.working_set[slot % 6]
                assert event.tensor not in working
        else:
            assert not demoted
    assert share[True] > share[False]


def test_uvm_with_fault_laden_kernel_times_charges_each_page_its_fault_service_time():
    """As above, timed by G10's model over the modelled fault-laden times: a faulting page
    of a kernel's output costs its share of UVM's fault service rate, 50 pages per 45 µs
    (0.9 µs a page), well below the link's 16 GB/s. The 21 pages of A at op 0 and of B at
    op 2: 2 × 21 × 0.9 µs of stall."""
    from matndp.host.tier.policies.uvm import UVMPolicy
    config = TierConfig(hbm_bytes=60 * PAGE, link_bytes_per_s=LINK, host_bytes=1000 * PAGE)
    result = simulate(chain(), np.full(4, OP_S), config, ZSSD, UVMPolicy(fault_laden=True))
    assert result.metrics["host_to_hbm_bytes"] == 42 * PAGE
    assert result.metrics["stall_s"] == pytest.approx(2 * 21 * 0.9e-6, rel=1e-9)
