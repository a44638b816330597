"""The planned-transfer executor with host DRAM: a planned fetch takes its pages from where
its plan put them, a planned eviction to host DRAM moves clean pages there too, and the
constructor refuses what cannot run."""

import numpy as np
import pytest

from matndp.host.graph import IterationGraph, Op
from matndp.host.tier import TierConfig
from matndp.host.tier.events import EventKind
from matndp.host.tier.executor import CapacityError, Executor
from matndp.host.tier.flash import FlashDevice, flash_preset
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk, Plan
from matndp.host.tier.trace_check import check_trace

from .graphs import PAGE, frozen_weight_graph, pages, split_graph


def executor(graph, capacity, host_pages, **kwargs):
    lifetimes = Lifetimes(graph, PAGE)
    tier = TierConfig(hbm_bytes=capacity * PAGE, host_bytes=host_pages * PAGE)
    run = Executor(lifetimes, np.full(lifetimes.n_ops, 1e-3), capacity, tier,
                   FlashDevice(flash_preset("zssd")), initial_resident=lifetimes.pages, **kwargs)
    return lifetimes, run


def counted(**counts):
    """The executor's counters of an iteration: ``counts``, every other one zero."""
    return {name: 0 for name in ("to_flash_pages", "from_flash_pages", "to_host_pages",
                                 "from_host_pages", "demand_fetch_pages", "demand_evict_pages",
                                 "planned_evict_pages", "planned_fetch_pages",
                                 "dropped_clean_pages", "faults", "peak_pages")} | counts


def fetches(log, tensor):
    return [(event.pages, event.host) for event in log
            if event.kind is EventKind.FETCH_BEGIN and event.tensor == tensor]


def test_a_planned_fetch_takes_its_pages_from_where_its_plan_put_them():
    """Split graph, HBM 13: 4 pages of X leave at boundary 1, 2 to host DRAM and 2 to
    flash. The flash part comes back first (boundary 7), from flash, though host DRAM
    holds pages of X too; the host part follows at boundary 8, from host DRAM."""
    lifetimes, run = executor(split_graph(), 13, 64)
    x = lifetimes.index["X"]
    plan = Plan("hand", 10, 13, (Chunk(x, 2, 0, 1, 2, 7, 9, "flash"),
                                 Chunk(x, 2, 0, 1, 2, 8, 9, "host")), strict=True)
    for _ in range(2):
        record = run.run_iteration(plan)
    assert fetches(run.log, x)[-2:] == [(2, 0), (2, 2)]
    # The peak is ops 5 and 6: 6 pages of X, Z (6) and one chain page.
    assert record.counters == counted(to_flash_pages=2, from_flash_pages=2, to_host_pages=2,
                                      from_host_pages=2, planned_evict_pages=4,
                                      planned_fetch_pages=4, peak_pages=13)
    check_trace(run.log, lifetimes, 13, 64)


def test_a_planned_eviction_to_host_dram_moves_clean_pages_there_too():
    """W is a weight never written: its flash copy (the checkpoint) stays valid, so an
    eviction without a destination drops its pages; one planned to host DRAM writes them
    there, to come back over the link."""
    for destination, to_host in ((None, 0), ("host", 4)):
        lifetimes, run = executor(frozen_weight_graph(), 13, 64)
        w = lifetimes.index["W"]
        plan = Plan("hand", 10, 13, (Chunk(w, 4, 0, 1, 2, 8, 9, destination),), strict=True)
        record = run.run_iteration(plan)
        assert record.counters["to_host_pages"] == to_host
        assert record.counters["dropped_clean_pages"] == 4 - to_host
        assert fetches(run.log, w) == [(4, to_host)]
        check_trace(run.log, lifetimes, 13, 64)


def test_the_executor_refuses_what_cannot_run():
    lifetimes = Lifetimes(split_graph(), PAGE)
    tier = TierConfig(hbm_bytes=13 * PAGE)
    flash = FlashDevice(flash_preset("zssd"))
    with pytest.raises(ValueError, match="9 op times for 10 ops"):
        Executor(lifetimes, np.full(9, 1e-3), 13, tier, flash, initial_resident=lifetimes.pages)
    with pytest.raises(CapacityError, match="needed at once"):
        run = Executor(lifetimes, np.full(10, 1e-3), 13, tier, flash,
                       initial_resident=lifetimes.pages)
        run._slot = 0
        run.make_space(14, set())


def test_the_executor_names_what_it_refuses():
    lifetimes = Lifetimes(frozen_weight_graph(), PAGE)
    tier = TierConfig(hbm_bytes=13 * PAGE)
    flash = FlashDevice(flash_preset("zssd"))
    resident = lifetimes.pages.copy()
    resident[lifetimes.index["W"]] = 11
    with pytest.raises(ValueError, match="^initial residency of W out of range$"):
        Executor(lifetimes, np.full(10, 1e-3), 13, tier, flash, initial_resident=resident)
    with pytest.raises(CapacityError, match="^initial residency 10 pages exceeds HBM of 9$"):
        Executor(lifetimes, np.full(10, 1e-3), 9, tier, flash, initial_resident=lifetimes.pages)
    run = Executor(lifetimes, np.full(10, 1e-3), 13, tier, flash, initial_resident=lifetimes.pages)
    run._slot = 1
    with pytest.raises(CapacityError, match="^14 pages needed at once, HBM holds 13$"):
        run.make_space(14, set())
    with pytest.raises(CapacityError, match=r"^op 'idle1': 4 pages needed, 3 free and nothing "
                                            r"evictable \(HBM 13 pages\)$"):
        run.make_space(4, {lifetimes.index["W"]})


def test_reconcile_brings_the_weights_to_the_residency_a_plan_starts_from():
    """A plan whose chunk of W (4 pages) comes back only in the next iteration starts
    with those pages out: reconciling to it drops them (W's checkpoint is valid, so
    nothing is written). Reconciling back to a plan without chunks prefetches them: a
    planned fetch, issued after the request overhead rather than the fault latency."""
    lifetimes, run = executor(frozen_weight_graph(), 13, 0)
    w = lifetimes.index["W"]
    wrapping = Plan("hand", 10, 13, (Chunk(w, 4, 9, 10, 11, 12, 13),), strict=False)
    run.reconcile(wrapping)
    assert (run.resident[w], run.used, run.now) == (6, 6, 0.0)
    assert [(e.kind, e.pages, e.dirty) for e in run.log[-2:]] == [
        (EventKind.EVICT_BEGIN, 4, 0), (EventKind.EVICT_END, 4, 0)]
    run.reconcile(Plan("hand", 10, 13, (), strict=False))
    assert fetches(run.log, w) == [(4, 0)]
    assert run.counters == counted(from_flash_pages=4, planned_evict_pages=4,
                                   planned_fetch_pages=4, dropped_clean_pages=4, peak_pages=10)
    tier = TierConfig(hbm_bytes=1)
    ready = tier.request_overhead_s
    flash_done = FlashDevice(flash_preset("zssd")).read(4 * PAGE, ready)
    assert run.inbound_done[w] == pytest.approx(max(flash_done + PAGE / tier.link_bytes_per_s,
                                                    ready + 4 * PAGE / tier.link_bytes_per_s))


def test_demand_paging_with_host_dram_fills_it_first_and_counts_one_fault_per_fetch():
    """No plan, HBM 13 and 2 pages of host DRAM: op 5 (big) needs Z's 6 pages and finds 2
    free; the least recently used tensor, X, gives 4 dirty pages, 2 to host DRAM and 2
    to flash. Op 9 fetches all 4 at once, host DRAM's first: one fault."""
    lifetimes, run = executor(split_graph(), 13, 2)
    x = lifetimes.index["X"]
    record = run.run_iteration(None)
    assert [(e.pages, e.dirty, e.host) for e in run.log
            if e.kind is EventKind.EVICT_BEGIN] == [(4, 4, 2)]
    assert fetches(run.log, x) == [(4, 2)]
    assert record.counters == counted(to_flash_pages=2, from_flash_pages=2, to_host_pages=2,
                                      from_host_pages=2, demand_fetch_pages=4,
                                      demand_evict_pages=4, faults=1, peak_pages=13)
    check_trace(run.log, lifetimes, 13, 2)


def test_evicting_no_pages_or_fetching_none_changes_nothing():
    lifetimes, run = executor(frozen_weight_graph(), 13, 0)
    w = lifetimes.index["W"]
    before = (list(run.resident), dict(run.counters), len(run.log))
    run._slot = 0
    assert run.evict(w, 0, demand=True) == run.now
    assert run.fetch(w, 3, demand=True, protect=set()) == run.now       # all of W is in HBM
    assert (list(run.resident), dict(run.counters), len(run.log)) == before


def test_demand_eviction_takes_the_tensor_touched_first_among_those_touched_together():
    """Op 0 writes B then A (A is the graph's first tensor); op 1 makes C (6 pages) in HBM
    of 10 holding both: of the two, last touched at the same instant, B was touched first
    and its 4 pages leave; op 3 reads it back."""
    tensors = [pages(4, "A"), pages(4, "B"), pages(6, "C")]
    ops = [Op("make", "gemm", "forward", 1, (), ("B", "A")),
           Op("big", "gemm", "forward", 1, (), ("C",)),
           Op("eat", "gemm", "forward", 1, ("C",), ()),
           Op("use", "gemm", "backward", 1, ("A", "B"), ())]
    lifetimes = Lifetimes(IterationGraph("tie", tensors, ops, batch=1, dtype="fp32"), PAGE)
    run = Executor(lifetimes, np.full(4, 1e-3), 10, TierConfig(hbm_bytes=10 * PAGE),
                   FlashDevice(flash_preset("zssd")), initial_resident=lifetimes.pages)
    run.run_iteration(None)
    names = lifetimes.tensor_ids
    moved = [(e.kind, names[e.tensor], e.pages) for e in run.log
             if e.kind in (EventKind.EVICT_BEGIN, EventKind.FETCH_BEGIN)]
    assert moved == [(EventKind.EVICT_BEGIN, "B", 4), (EventKind.FETCH_BEGIN, "B", 4)]
    check_trace(run.log, lifetimes, 10)


@pytest.mark.parametrize("plan_chunks, stall_s, fetch_counts", [
    # A planned prefetch at boundary 7: issued after the request overhead, it lands during
    # ops 7 and 8, well before op 9; no fault.
    (True, 0.0, {"planned_fetch_pages": 4}),
    # Without a plan, op 5 evicts X's 4 pages on demand and op 9 faults them back: it
    # waits the fault latency (0.1 s, far beyond the transfer) and more.
    (False, None, {"demand_fetch_pages": 4, "faults": 1}),
])
def test_only_a_fetch_the_op_waits_for_is_a_fault(plan_chunks, stall_s, fetch_counts):
    """Split graph, HBM 13, no host DRAM, a fault latency of 0.1 s."""
    lifetimes = Lifetimes(split_graph(), PAGE)
    tier = TierConfig(hbm_bytes=13 * PAGE, fault_latency_s=0.1)
    run = Executor(lifetimes, np.full(10, 1e-3), 13, tier, FlashDevice(flash_preset("zssd")),
                   initial_resident=lifetimes.pages)
    x = lifetimes.index["X"]
    plan = Plan("hand", 10, 13, (Chunk(x, 4, 0, 1, 2, 7, 9),), strict=True) if plan_chunks else None
    for _ in range(2):
        record = run.run_iteration(plan)
    evicted = {"planned_evict_pages": 4} if plan_chunks else {"demand_evict_pages": 4}
    assert record.counters == counted(to_flash_pages=4, from_flash_pages=4, peak_pages=13,
                                      **evicted, **fetch_counts)
    if stall_s is not None:
        assert record.stall_s == stall_s
    else:
        assert record.stall_by_boundary[9] > 0.1
    check_trace(run.log, lifetimes, 13)
