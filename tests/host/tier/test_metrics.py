"""Energy, throughput per watt and memory cost worked out by hand for the split graph."""

import numpy as np
import pytest

from matndp.host.tier import TierConfig, flash_preset, simulate

from .graphs import PAGE, split_graph


OP_S = 1e-3
# Bytes the ten ops read and write (each tensor once): make_x X+s0, four chain ops 2 pages,
# big s4+Z, use_z Z+s6, two chain ops, use_x X+s8+y.
OP_BYTES = PAGE * ((10 + 1) + 4 * 2 + (1 + 6) + (6 + 1) + 2 * 2 + (10 + 1 + 1))


def run(policy):
    graph = split_graph()
    return simulate(graph, np.full(10, OP_S), TierConfig(hbm_bytes=13 * PAGE),
                    flash_preset("zssd"), policy, gpu="a100").metrics


def test_ideal_energy_is_compute_static_and_hbm():
    metrics = run("ideal")
    assert OP_BYTES == 200_704
    static = 400 * 0.30 * 10 * OP_S                    # A100 TDP × static share × time
    hbm = OP_BYTES * 8 * 13.11e-12                     # device 3.97 + transport 9.14 pJ/bit
    arithmetic = 10 * (0.38 + 1.31) / 2 * 1e-12       # one FP32 FLOP per op
    assert metrics["energy_j"] == pytest.approx(static + hbm + arithmetic)
    assert metrics["throughput_per_watt"] == pytest.approx(1 / (static + hbm + arithmetic))   # batch 1
    assert metrics["memory_cost_usd"] == pytest.approx(17 * PAGE / 1e9 * 9.0)   # all HBM, no flash
    assert metrics["energy_breakdown_j"] == pytest.approx(
        {"gpu_arithmetic_j": arithmetic, "gpu_static_j": static, "hbm_j": hbm, "link_j": 0,
         "flash_j": 0})


def test_lru_energy_adds_link_flash_and_stall():
    metrics = run("lru")
    moved = 8 * PAGE                                   # 4 pages out, 4 back
    breakdown = metrics["energy_breakdown_j"]
    assert breakdown["link_j"] == pytest.approx(moved * 8 * 6.5e-12)
    assert breakdown["hbm_j"] == pytest.approx((OP_BYTES + moved) * 8 * 13.11e-12)
    die_w = 3.3 * 0.025
    bus = PAGE * 8 * 4e-12
    assert breakdown["flash_j"] == pytest.approx(4 * (die_w * 3e-6 + bus) + 4 * (die_w * 100e-6 + bus))
    # LRU stalls once writing 4 pages back (tPROG, then the pages at the program bandwidth
    # of 32 dies x 2 planes x 4 KiB per 100 us) and once faulting them in as one batch
    # (fault latency, tR, the pages at the read bandwidth of 8 channels x 400 MB/s)
    program_bw = 32 * 2 * PAGE / 100e-6
    stall = (100e-6 + 4 * PAGE / program_bw) + (45e-6 + 3e-6 + 4 * PAGE / (8 * 400e6))
    assert metrics["iteration_s"] == pytest.approx(10 * OP_S + stall)
    assert breakdown["gpu_static_j"] == pytest.approx(400 * 0.30 * (10 * OP_S + stall))
    assert metrics["iteration_s"] > 10 * OP_S
    # 13 pages of HBM plus the 17-page footprint in Z-NAND.
    assert metrics["memory_cost_usd"] == pytest.approx(13 * PAGE / 1e9 * 9.0 + 17 * PAGE / 1e9 * 0.50)
    assert metrics["flash_page_reads"] == 4 and metrics["flash_page_programs"] == 4


def test_the_time_breakdown_splits_each_op_span_as_g10_does():
    """Two 1 s ops; a transfer is in flight from 0.5 s to 1.5 s and op 1 waits for it
    (0.5 s of stall). Op 0's span [0, 1] has 0.5 s beside the transfer: 0.5 s compute
    alone, 0.5 s overlapped. Op 1's span [1, 2.5] has 0.5 s of transfer: 1 s compute
    alone, no overlap (0.5 + 1 - 1.5), 0.5 s stall."""
    from matndp.host.tier.events import EventKind, TraceEvent
    from matndp.host.tier.executor import IterationRecord
    from matndp.host.tier.metrics import time_breakdown
    log = [TraceEvent(0.0, EventKind.OP, None, 0, slot=0),
           TraceEvent(0.5, EventKind.FETCH_BEGIN, 0, 1),
           TraceEvent(1.5, EventKind.FETCH_END, 0, 1),
           TraceEvent(1.5, EventKind.OP, None, 0, slot=1)]
    record = IterationRecord(index=0, start_s=0.0, end_s=2.5, compute_s=2.0, stall_s=0.5,
                             stall_by_boundary=np.array([0.0, 0.5]), counters={}, flash={})
    assert time_breakdown(log, record, [1.0, 1.0]) == pytest.approx(
        {"compute": 1.5, "overlap": 0.5, "stall": 0.5})


def test_an_op_that_never_waited_has_no_stall_not_a_rounding_below_zero():
    """One op of 0.1 s starting at 0.7 s: its span, (0.7 + 0.1) - 0.7, rounds to a hair
    below 0.1 s, which as span - op time was a negative stall (a "-0 %" in the tables)."""
    from matndp.host.tier.events import EventKind, TraceEvent
    from matndp.host.tier.executor import IterationRecord
    from matndp.host.tier.metrics import time_breakdown
    log = [TraceEvent(0.7, EventKind.OP, None, 0, slot=0)]
    record = IterationRecord(index=1, start_s=0.7, end_s=0.8, compute_s=0.1, stall_s=0.0,
                             stall_by_boundary=np.zeros(1), counters={}, flash={})
    breakdown = time_breakdown(log, record, [0.1])
    assert breakdown["stall"] == 0.0
    assert breakdown["overlap"] >= 0.0 and breakdown["compute"] == pytest.approx(0.1)


def test_every_traffic_and_capacity_figure_of_a_run_through_host_dram():
    """LRU with 2 pages of host DRAM: op 5 (big) evicts 4 pages of X, 2 to host DRAM and 2
    to flash; op 9 faults all 4 back in one batch, the host pages first."""
    tier = TierConfig(hbm_bytes=13 * PAGE, host_bytes=2 * PAGE)
    metrics = simulate(split_graph(), np.full(10, OP_S), tier, flash_preset("zssd"), "lru").metrics
    two = 2 * PAGE
    assert {key: metrics[key] for key in (
        "inter_tier_bytes", "hbm_to_host_bytes", "host_to_hbm_bytes", "hbm_to_flash_bytes",
        "flash_to_hbm_bytes", "flash_read_bytes", "flash_write_bytes", "flash_page_reads",
        "flash_page_programs", "demand_fetch_bytes", "demand_evict_bytes", "faults",
        "fault_batches", "host_capacity_bytes", "hbm_capacity_bytes", "hbm_peak_bytes",
        "footprint_bytes", "compute_s")} == {
        "inter_tier_bytes": 4 * two, "hbm_to_host_bytes": two, "host_to_hbm_bytes": two,
        "hbm_to_flash_bytes": two, "flash_to_hbm_bytes": two, "flash_read_bytes": two,
        "flash_write_bytes": two, "flash_page_reads": 2, "flash_page_programs": 2,
        "demand_fetch_bytes": 2 * two, "demand_evict_bytes": 2 * two, "faults": 4,
        "fault_batches": 1, "host_capacity_bytes": two, "hbm_capacity_bytes": 13 * PAGE,
        "hbm_peak_bytes": 13 * PAGE, "footprint_bytes": 17 * PAGE,
        "compute_s": pytest.approx(10 * OP_S)}
    iteration_s, energy_j = metrics["iteration_s"], metrics["energy_j"]
    assert metrics["stall_s"] == pytest.approx(iteration_s - 10 * OP_S)
    assert metrics["samples_per_s"] == pytest.approx(1 / iteration_s)        # batch 1
    assert metrics["average_power_w"] == pytest.approx(energy_j / iteration_s)
    assert energy_j == pytest.approx(sum(metrics["energy_breakdown_j"].values()))
    # 13 pages of HBM, the 17-page footprint in Z-NAND, 2 pages of host DRAM at $3/GB.
    assert metrics["memory_cost_usd"] == pytest.approx(
        13 * PAGE / 1e9 * 9.0 + 17 * PAGE / 1e9 * 0.50 + two / 1e9 * 3.0)
