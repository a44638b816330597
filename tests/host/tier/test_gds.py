"""FlashNeuron's runtime: GPU memory as one flat range of pages (first fit from either
end), whole tensors through first-come first-served flash queues, the barrier before the
loss, and a tensor that finds no contiguous run."""

from dataclasses import replace

import numpy as np
import pytest

from matndp.host.tier import TierConfig, simulate
from matndp.host.tier.events import EventKind
from matndp.host.tier.flash import flash_preset
from matndp.host.tier.gds import ContiguousMemory, GDSExecutor, OutOfMemory
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk, Plan

from .graphs import PAGE, split_graph


# One page read or programmed per microsecond (bus-bound, no array latency to speak of).
ONE_PAGE_PER_US = replace(flash_preset("zssd"), channels=1, dies_per_channel=1,
                          planes_per_die=1, read_latency_s=1e-12, program_latency_s=1e-12,
                          channel_bytes_per_s=PAGE / 1e-6)


def test_contiguous_memory_takes_first_fits_from_either_end_and_merges_what_comes_back():
    memory = ContiguousMemory(10)
    assert memory.take_low(3) == 0 and memory.take_high(3) == 7
    assert memory.take_low(2) == 3 and memory.longest() == 2 and memory.in_use() == 8
    memory.give_back(0, 3)                     # free: [0, 3) and [5, 7)
    assert memory.take_low(4) is None          # 5 pages free, no run of 4
    memory.give_back(3, 2)                     # [0, 7) again
    assert memory.longest() == 7 and memory.take_high(7) == 0


def test_contiguous_memory_refuses_no_pages():
    with pytest.raises(ValueError, match="GPU memory of 0 pages"):
        ContiguousMemory(0)


def executor(graph, capacity):
    lifetimes = Lifetimes(graph, PAGE)
    tier = TierConfig(hbm_bytes=capacity * PAGE)
    run = GDSExecutor(lifetimes, np.full(lifetimes.n_ops, 1e-3), capacity, tier,
                      ONE_PAGE_PER_US, initial_resident=lifetimes.pages)
    return lifetimes, run


def test_an_offloaded_activation_is_written_then_read_back_when_its_op_needs_it():
    """Split graph, 13 pages: X (10 pages) is offloaded at boundary 1 (10 µs to write, done
    long before the loss at op 9, whose barrier finds nothing in flight). Op 9 needs X
    back: it is read then, 10 µs of stall; nothing is prefetched earlier (op 9 is the
    first op after the forward pass, and the last)."""
    lifetimes, run = executor(split_graph(), 13)
    x = lifetimes.index["X"]
    plan = Plan("hand", 10, 13, (Chunk(x, 10, 0, 1, 1, 9, 9, "flash"),), strict=False,
                sync_at=(9,))
    record = run.run_iteration(plan)
    assert record.stall_s == pytest.approx(10e-6)
    assert record.stall_by_boundary[9] == pytest.approx(10e-6)
    assert record.counters["to_flash_pages"] == record.counters["from_flash_pages"] == 10
    assert record.counters["demand_fetch_pages"] == 10


def test_an_op_waits_for_the_offload_that_frees_its_room():
    """As above with flash at 0.9 ms per page: X's offload, issued at boundary 1 (1 ms),
    ends at 10 ms. Op 5's Z (6 pages) finds no run until then (the reserved page of the
    write-only y, X and the chain tensors fill the 13 pages): it starts at 10 ms instead
    of 5 ms. The barrier at op 9 finds the write queue empty; X's read takes 9 ms."""
    slow = replace(ONE_PAGE_PER_US, channel_bytes_per_s=PAGE / 0.9e-3)
    lifetimes = Lifetimes(split_graph(), PAGE)
    run = GDSExecutor(lifetimes, np.full(10, 1e-3), 13, TierConfig(hbm_bytes=13 * PAGE), slow,
                      initial_resident=lifetimes.pages)
    x = lifetimes.index["X"]
    plan = Plan("hand", 10, 13, (Chunk(x, 10, 0, 1, 1, 9, 9, "flash"),), strict=False,
                sync_at=(9,))
    record = run.run_iteration(plan)
    assert record.stall_by_boundary[5] == pytest.approx(5e-3)
    assert record.stall_by_boundary[9] == pytest.approx(9e-3)
    assert record.stall_s == pytest.approx(14e-3)


def test_a_tensor_that_finds_no_contiguous_run_fails_with_the_reason():
    """12 pages of GPU memory and no plan: the reserved page of the write-only y, X (10
    pages, kept) and s0 fill it, and op 1's s1 finds no run with nothing in flight."""
    _, run = executor(split_graph(), 12)
    with pytest.raises(OutOfMemory, match="op 'idle1': no contiguous run of 1 pages for s1"):
        run.run_iteration(None)


def test_flashneuron_runs_through_simulate_under_the_trace_check():
    tier = TierConfig(hbm_bytes=13 * PAGE)
    result = simulate(split_graph(), np.full(10, 1e-3), tier, ONE_PAGE_PER_US, "flashneuron")
    assert result.metrics["stall_s"] == pytest.approx(10e-6)
    assert result.metrics["hbm_to_flash_bytes"] == result.metrics["flash_to_hbm_bytes"] == 10 * PAGE


def test_every_counter_of_an_offload_and_its_demand_read():
    """The offload of the first test counted whole: X's 10 pages written once (a planned
    eviction, one program request) and read once on demand (one read request). The peak
    is op 1's: X (its write still in flight), s0, s1 and the page reserved for y."""
    lifetimes, run = executor(split_graph(), 13)
    x = lifetimes.index["X"]
    plan = Plan("hand", 10, 13, (Chunk(x, 10, 0, 1, 1, 9, 9, "flash"),), strict=False,
                sync_at=(9,))
    record = run.run_iteration(plan)
    assert record.counters == {
        "to_flash_pages": 10, "from_flash_pages": 10, "to_host_pages": 0, "from_host_pages": 0,
        "demand_fetch_pages": 10, "demand_evict_pages": 0, "planned_evict_pages": 10,
        "planned_fetch_pages": 0, "dropped_clean_pages": 0, "faults": 0, "peak_pages": 13}
    flash = ONE_PAGE_PER_US
    assert record.flash == {
        "page_reads": 10, "page_programs": 10, "read_requests": 1, "program_requests": 1,
        "bus_bytes": 20 * PAGE,
        "energy_j": pytest.approx(10 * (flash.read_energy_j_per_page
                                        + flash.program_energy_j_per_page)
                                  + 20 * PAGE * flash.bus_energy_j_per_byte)}


def test_contiguous_memory_keeps_its_free_runs_sorted_and_merged():
    memory = ContiguousMemory(12)
    starts = [memory.take_low(2) for _ in range(5)]          # 0 2 4 6 8; free: [10, 12)
    assert starts == [0, 2, 4, 6, 8] and memory.free == [(10, 12)]
    memory.give_back(2, 2)
    memory.give_back(6, 2)
    assert memory.free == [(2, 4), (6, 8), (10, 12)]
    assert memory.take_high(2) == 10 and memory.take_high(3) is None
    memory.give_back(4, 2)                                     # joins both neighbours
    assert memory.free == [(2, 8)] and (memory.longest(), memory.in_use()) == (6, 6)
    assert memory.take_low(6) == 2 and memory.free == [] and memory.longest() == 0
    memory.give_back(0, 2)
    memory.give_back(10, 2)
    assert memory.free == [(0, 2), (10, 12)]
    assert memory.take_high(1) == 11 and memory.take_low(1) == 0


def test_no_contiguous_run_is_reported_with_the_memory_it_found():
    _, run = executor(split_graph(), 12)
    with pytest.raises(OutOfMemory, match=r"^op 'idle1': no contiguous run of 1 pages for s1 "
                                          r"\(12 of 12 pages in use, the longest free run 0\)$"):
        run.run_iteration(None)
    with pytest.raises(ValueError, match="^GPU memory of -1 pages$"):
        ContiguousMemory(-1)


def test_occupancy_is_sampled_before_the_iteration_and_twice_per_op():
    """The samples of the iteration above: one at its start, one as each op starts and one
    after it ends; times never go back, pages never exceed the 13 of GPU memory, and the
    op-start samples reach the peak of 13 pages at op 1."""
    lifetimes, run = executor(split_graph(), 13)
    x = lifetimes.index["X"]
    plan = Plan("hand", 10, 13, (Chunk(x, 10, 0, 1, 1, 9, 9, "flash"),), strict=False,
                sync_at=(9,))
    record = run.run_iteration(plan)
    samples = record.occupancy
    assert len(samples) == 1 + 2 * 10 and samples[0].time_s == record.start_s
    assert all(isinstance(s.pages, int) and 0 <= s.pages <= 13 for s in samples)
    assert all(a.time_s <= b.time_s for a, b in zip(samples, samples[1:]))
    op_starts = [s.pages for s in samples[1::2]]
    assert max(op_starts) == op_starts[1] == record.counters["peak_pages"] == 13


def test_occupancy_samples_are_the_pages_in_use_as_each_op_starts_and_ends():
    """The iteration above, sample by sample: the page reserved for y at the start; X and
    s0 from op 0; s1 joins at op 1, during which X's write ends (10 µs) and frees its run,
    and s0 dies; each chain op adds its output and frees its input; Z (6 pages) is in use
    at ops 5 and 6; X comes back at op 9 (after its 10 µs read) and leaves with s8."""
    lifetimes, run = executor(split_graph(), 13)
    x = lifetimes.index["X"]
    plan = Plan("hand", 10, 13, (Chunk(x, 10, 0, 1, 1, 9, 9, "flash"),), strict=False,
                sync_at=(9,))
    record = run.run_iteration(plan)
    assert [s.pages for s in record.occupancy] == [1, 12, 12, 13, 2, 3, 2, 3, 2, 3, 2,
                                                   8, 7, 8, 2, 3, 2, 3, 2, 12, 1]
    starts = [1e-3 * slot for slot in range(9)] + [9e-3 + 10e-6]
    assert [s.time_s for s in record.occupancy[1::2]] == pytest.approx(starts)
    assert [s.time_s for s in record.occupancy[2::2]] == pytest.approx(
        [start + 1e-3 for start in starts])


@pytest.mark.parametrize("capacity, barrier, fetch_at, prefetched, stall_us", [
    (30, 7, 8e-3, True, 0),
    (25, 7, 9e-3, True, 10),
    (24, 7, 9e-3, False, 10),
    (29, 5, 7e-3, True, 0),
])
def test_the_backward_pass_prefetches_what_its_next_ops_need_while_room_is_left(
        capacity, barrier, fetch_at, prefetched, stall_us):
    """From the barrier on, after each op, X (10 pages) is fetched for op 9 when the
    longest free run exceeds the largest op's activations (op 9's X, s8 and y: 12 pages)
    by more than X's 10 pages. First fit from the low end leaves, after op 7, the page
    reserved for y at 0, s7 at 2 and the rest free: [3, capacity) and s6's page at 1.
    With 30 pages that run is 27 (15 beyond): X is read during op 8 and there for op 9.
    With 25 it is 22, 10 beyond, not more; after op 8 (s8 at 1, s7 gone) it is 23, and
    X is read as op 9 starts, which waits its 10 µs. With 24 it never is: op 9 faults X.
    A barrier at op 5 starts the prefetches earlier, but Z (6 pages) still splits the
    memory then: X goes after op 6."""
    lifetimes, run = executor(split_graph(), capacity)
    x = lifetimes.index["X"]
    plan = Plan("hand", 10, capacity, (Chunk(x, 10, 0, 1, 1, 9, 9, "flash"),), strict=False,
                sync_at=(barrier,))
    record = run.run_iteration(plan)
    planned, demand = (10, 0) if prefetched else (0, 10)
    assert (record.counters["planned_fetch_pages"], record.counters["demand_fetch_pages"]) == \
        (planned, demand)
    assert record.stall_s == pytest.approx(stall_us * 1e-6, abs=1e-12)
    assert [e.time_s for e in run.log if e.kind is EventKind.FETCH_BEGIN] == \
        pytest.approx([fetch_at])
