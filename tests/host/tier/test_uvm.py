"""Page-granular demand paging (``lru``): fault counts, fault batches, LRU order and stall
worked out by hand on small graphs, with and without a host-DRAM tier; and DeepUM's
prefetching ahead of the demand faults."""

import math

from dataclasses import replace

import numpy as np
import pytest

from matndp.host.graph import IterationGraph, Op
from matndp.host.tier import TierConfig, flash_preset, simulate
from matndp.host.tier.events import EventKind
from matndp.host.tier.fault_model import fault_times
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.uvm import UVMExecutor

from .graphs import PAGE, duplex_graph, pages, return_graph, two_idle_graph


ZSSD = flash_preset("zssd")
OP_S = 1e-3
LINK = TierConfig(hbm_bytes=1).link_bytes_per_s
READ = PAGE / min(LINK, ZSSD.read_bytes_per_s)          # seconds per page, flash -> HBM
PROGRAM = PAGE / min(LINK, ZSSD.program_bytes_per_s)    # HBM -> flash


def run(graph, **tier):
    return simulate(graph, np.full(len(graph.ops), OP_S), TierConfig(**tier), ZSSD, "lru")


def evictions(result, iteration=-1):
    start = result.records[iteration].start_s
    names = result.lifetimes.tensor_ids
    return [(names[e.tensor], e.pages, e.host) for e in result.log
            if e.kind is EventKind.EVICT_BEGIN and e.time_s >= start]


def test_a_partly_evicted_tensor_faults_back_exactly_its_missing_pages():
    """HBM 150: op 1 finds 29 pages free and needs 100, so 71 of A's pages leave (A is the
    only tensor op 1 does not touch). Op 4 faults those 71 pages back: two batches of 50
    and 21, each after the fault latency and one flash read latency."""
    result = run(return_graph(), hbm_bytes=150 * PAGE)
    metrics = result.metrics
    assert evictions(result) == [("A", 71, 0)]
    assert (metrics["faults"], metrics["fault_batches"]) == (71, 2)
    assert metrics["hbm_to_flash_bytes"] == metrics["flash_to_hbm_bytes"] == 71 * PAGE
    write_out = ZSSD.program_latency_s + 71 * PROGRAM
    faults = 2 * (45e-6 + ZSSD.read_latency_s) + 71 * READ
    assert metrics["stall_s"] == pytest.approx(write_out + faults, rel=1e-12)
    assert metrics["iteration_s"] == pytest.approx(5 * OP_S + write_out + faults, rel=1e-12)


@pytest.mark.parametrize("batch", [1, 7, 50, 71, 1000])
def test_faults_are_serviced_in_batches(batch):
    result = run(return_graph(), hbm_bytes=150 * PAGE, fault_batch_pages=batch)
    metrics = result.metrics
    batches = math.ceil(71 / batch)
    assert (metrics["faults"], metrics["fault_batches"]) == (71, batches)
    faults = batches * (45e-6 + ZSSD.read_latency_s) + 71 * READ
    assert metrics["stall_s"] == pytest.approx(ZSSD.program_latency_s + 71 * PROGRAM + faults,
                                               rel=1e-12)


def test_lru_takes_the_least_recently_used_pages_first():
    """HBM 120 at op 2: A 40 + C 40 + s1 in HBM, 39 pages free, 101 needed (B and s2): all
    40 pages of A (touched by op 0) and 22 of C (touched by op 1) leave; op 3 faults all 62
    back."""
    result = run(two_idle_graph(), hbm_bytes=120 * PAGE)
    assert evictions(result) == [("A", 40, 0), ("C", 22, 0)]
    assert (result.metrics["faults"], result.metrics["fault_batches"]) == (62, 2)


def test_evictions_fill_host_dram_first_then_flash():
    """With 30 pages of host DRAM, 30 of A's 71 evicted pages go there and 41 to flash; op 4
    takes the host pages first: its first batch is 30 host + 20 flash pages, the second 21
    flash pages."""
    host_s = PAGE / min(LINK, TierConfig(hbm_bytes=1).host_bytes_per_s)
    latency = TierConfig(hbm_bytes=1).host_latency_s
    result = run(return_graph(), hbm_bytes=150 * PAGE, host_bytes=30 * PAGE)
    metrics = result.metrics
    assert evictions(result) == [("A", 71, 30)]
    assert (metrics["hbm_to_host_bytes"], metrics["hbm_to_flash_bytes"]) == (30 * PAGE, 41 * PAGE)
    assert (metrics["host_to_hbm_bytes"], metrics["flash_to_hbm_bytes"]) == (30 * PAGE, 41 * PAGE)
    assert metrics["inter_tier_bytes"] == 142 * PAGE
    write_out = (latency + 30 * host_s) + (ZSSD.program_latency_s + 41 * PROGRAM)
    first = 45e-6 + (latency + 30 * host_s) + (ZSSD.read_latency_s + 20 * READ)
    second = 45e-6 + ZSSD.read_latency_s + 21 * READ
    assert metrics["stall_s"] == pytest.approx(write_out + first + second, rel=1e-12)
    assert result.trace_totals["host_peak_pages"] == 30


def test_a_duplex_link_overlaps_write_outs_with_migrations():
    """Each of the steady iteration's two fault batches migrates 22 pages in and writes 22
    out: with a full-duplex link and a duplex flash device a batch takes the longer of the
    two; with a shared link, or a flash device whose reads and programs share its dies and
    buses (the Z-SSD preset), their sum."""
    tier = TierConfig(hbm_bytes=100 * PAGE)
    times = np.full(3, OP_S)
    duplex = simulate(duplex_graph(), times, tier, replace(ZSSD, duplex=True), "lru")
    shared = simulate(duplex_graph(), times, replace(tier, link_duplex=False),
                      replace(ZSSD, duplex=True), "lru")
    shared_flash = run(duplex_graph(), hbm_bytes=100 * PAGE)
    assert evictions(duplex) == [("A", 22, 0), ("W", 22, 0)]
    into = ZSSD.read_latency_s + 22 * READ
    out = ZSSD.program_latency_s + 22 * PROGRAM
    for result, batch in ((duplex, max(into, out)), (shared, into + out),
                          (shared_flash, into + out)):
        metrics = result.metrics
        assert (metrics["faults"], metrics["fault_batches"]) == (44, 2)
        assert metrics["inter_tier_bytes"] == 88 * PAGE
        assert metrics["stall_s"] == pytest.approx(2 * (45e-6 + batch), rel=1e-12)


def test_uvm_without_pressure_moves_nothing():
    metrics = run(return_graph(), hbm_bytes=221 * PAGE).metrics
    assert metrics["inter_tier_bytes"] == 0 and metrics["faults"] == 0
    assert metrics["iteration_s"] == pytest.approx(5 * OP_S)


def test_an_op_larger_than_hbm_is_refused():
    with pytest.raises(ValueError, match="below the largest single op's working set"):
        run(return_graph(), hbm_bytes=121 * PAGE)


def test_every_counter_of_an_iteration_through_host_dram():
    """The host-DRAM run above in batches of 7 faults: A's 30 host pages come back in the
    first four batches and 2 pages of the fifth; its 41 flash pages in the fifth (5), five
    batches of 7 and a last one of 1 — seven flash read requests. Op 1's write-out to
    flash is one program request of 41 pages. The peak is op 1's full HBM."""
    host_s = PAGE / min(LINK, TierConfig(hbm_bytes=1).host_bytes_per_s)
    latency = TierConfig(hbm_bytes=1).host_latency_s
    result = run(return_graph(), hbm_bytes=150 * PAGE, host_bytes=30 * PAGE, fault_batch_pages=7)
    record = result.records[-1]
    assert record.counters == {
        "to_flash_pages": 41, "from_flash_pages": 41, "to_host_pages": 30, "from_host_pages": 30,
        "demand_fetch_pages": 71, "demand_evict_pages": 71, "planned_evict_pages": 0,
        "planned_fetch_pages": 0, "dropped_clean_pages": 0, "faults": 71, "fault_batches": 11,
        "peak_pages": 150, "demoted_pages": 0}
    assert record.flash == {"page_reads": 41, "page_programs": 41, "read_requests": 7,
                            "program_requests": 1, "bus_bytes": 82 * PAGE,
                            "energy_j": pytest.approx(41 * (ZSSD.read_energy_j_per_page
                                                            + ZSSD.program_energy_j_per_page)
                                                      + 82 * PAGE * ZSSD.bus_energy_j_per_byte)}
    write_out = (latency + 30 * host_s) + (ZSSD.program_latency_s + 41 * PROGRAM)
    from_host = 4 * (latency + 7 * host_s)
    mixed = latency + 2 * host_s + ZSSD.read_latency_s + 5 * READ
    from_flash = 6 * ZSSD.read_latency_s + 36 * READ
    faults = 11 * 45e-6 + from_host + mixed + from_flash
    assert record.stall_s == pytest.approx(write_out + faults, rel=1e-12)


def weight_ring(sizes):
    """Weights A, B, C, D of ``sizes`` pages, each read by one op in turn."""
    tensors = [pages(size, name, "weight") for size, name in zip(sizes, "ABCD")]
    ops = [Op(f"use_{name}", "gemm", "forward", 1, (name,), ()) for name in "ABCD"]
    return IterationGraph("weight-ring", tensors, ops, batch=1, dtype="fp32")


def test_prefetching_one_op_ahead_moves_each_tensor_before_its_op():
    """Weights A, B, C (10 pages) and D (1 page), HBM 25, host DRAM 5; A and B start in
    HBM, C's first 5 missing pages in host DRAM and the rest of C and D in flash. Before
    each op runs, the missing pages of the next op's tensor start moving, into space
    LRU makes outside the two ops:
    - op 0: B is all there: nothing moves;
    - op 1: C's 10 pages (5 from host DRAM, 5 from flash) need 5 beyond the 5 free: 5 of
      A go to flash, host DRAM being full;
    - op 2: D's single page comes from flash, and 1 page of A goes to host DRAM;
    - op 3: A's 6 missing pages (1 in host DRAM, 5 in flash) push out 6 of B: 4 to host
      DRAM (its 5 pages less A's 1), 2 to flash (A's own page is not demoted).
    Every transfer lands within its op's 1 ms: no op waits, nothing faults. Three flash
    reads (5 + 1 + 5 pages) and two programs (5 + 2)."""
    lifetimes = Lifetimes(weight_ring((10, 10, 10, 1)), PAGE)
    times = np.full(4, OP_S)
    tier = TierConfig(hbm_bytes=25 * PAGE, host_bytes=5 * PAGE)
    run = UVMExecutor(lifetimes, times, 25, tier, ZSSD, initial_resident=np.array([10, 10, 0, 0]),
                      fault_model=fault_times(lifetimes, times, tier), keep_dead=True,
                      prefetch_ahead=1)
    record = run.run_iteration()
    names = lifetimes.tensor_ids
    moved = [(e.kind, names[e.tensor], e.pages, e.host) for e in run.log
             if e.kind in (EventKind.EVICT_BEGIN, EventKind.FETCH_BEGIN)]
    assert moved == [(EventKind.EVICT_BEGIN, "A", 5, 0), (EventKind.FETCH_BEGIN, "C", 10, 5),
                     (EventKind.EVICT_BEGIN, "A", 1, 1), (EventKind.FETCH_BEGIN, "D", 1, 0),
                     (EventKind.EVICT_BEGIN, "B", 6, 4), (EventKind.FETCH_BEGIN, "A", 6, 1)]
    # Page counts in the log are whole numbers.
    assert all(type(e.pages) is int and type(e.host) is int for e in run.log)
    assert record.counters == {
        "to_flash_pages": 7, "from_flash_pages": 11, "to_host_pages": 5, "from_host_pages": 6,
        "demand_fetch_pages": 0, "demand_evict_pages": 12, "planned_evict_pages": 0,
        "planned_fetch_pages": 17, "dropped_clean_pages": 0, "faults": 0, "fault_batches": 0,
        "peak_pages": 25, "demoted_pages": 0}
    flash = record.flash
    assert (flash["page_reads"], flash["read_requests"]) == (11, 3)
    assert (flash["page_programs"], flash["program_requests"]) == (7, 2)
    assert record.stall_s == 0
