"""G10's final pass for its GPUDirect-storage variants, worked out by hand, and what the
two variants use."""

import numpy as np

from matndp.host.tier import TierConfig, simulate
from matndp.host.tier.flash import flash_preset
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk, Plan
from matndp.host.tier.policies.g10_gds import gds_final_pass

from ..graphs import PAGE, SPLIT_WITH_V_OCCUPANCY, split_with_v_graph


def test_the_final_pass_evicts_gaps_spanning_the_fullest_slot_until_below_nine_tenths():
    """HBM 20, nothing planned: the fullest slot is op 5 (25 pages). X (idle 8 slots x 10
    pages) and V (5 x 8) span it; X goes first, to flash with no prefetch, and 25 - 10 =
    15 < 0.9 x 20: V stays."""
    lifetimes = Lifetimes(split_with_v_graph(), PAGE)
    assert list(lifetimes.base_occupancy) == SPLIT_WITH_V_OCCUPANCY
    plan = gds_final_pass(Plan("g10", 10, 20, (), strict=False), lifetimes, np.full(10, 1e-3))
    assert plan.chunks == (Chunk(lifetimes.index["X"], 10, 0, 1, 1, 9, 9, "flash"),)


def test_gds_ssd_uses_no_host_memory_and_gds_full_does():
    """14 µs ops, HBM 20: X's idle gap (112 µs) is below G10's SSD rule for it (about
    128 µs with the Z-SSD and 45 µs of system latency) and above the host rule (about
    93 µs). G10-GDS-FULL plans X to host memory as G10 does (out over slots 2..6), and its
    final pass then sends V, which spans the fullest slot left (op 7, 20 pages >= 18), to
    the SSD with no prefetch. G10-GDS-SSD has no host memory: G10's plan leaves X in
    place, and the final pass sends it to the SSD (op 5 then holds 15 < 18)."""
    tier = TierConfig(hbm_bytes=20 * PAGE, host_bytes=64 * PAGE)
    lifetimes = Lifetimes(split_with_v_graph(), PAGE)
    x, v = lifetimes.index["X"], lifetimes.index["V"]
    expected = {"g10_gds_full": (Chunk(x, 10, 0, 1, 2, 7, 9, "host"), Chunk(v, 8, 2, 3, 3, 8, 8, "flash")),
                "g10_gds_ssd": (Chunk(x, 10, 0, 1, 1, 9, 9, "flash"),)}
    for policy, chunks in expected.items():
        run = simulate(split_with_v_graph(), np.full(10, 14e-6), tier, flash_preset("zssd"),
                       policy)
        assert run.plans[-1].chunks == chunks, policy
        assert (run.metrics["hbm_to_host_bytes"] > 0) == (policy == "g10_gds_full")
        assert run.metrics["faults"] == 0


def test_the_final_pass_goes_on_at_exactly_nine_tenths_and_stops_below():
    """HBM 20 (nine tenths: 18 pages), G10's plan already keeping part of X out over
    slots 2..8: 7 pages leave op 5 at 18, so V (spanning op 5) goes too; 8 pages leave it
    at 17, and nothing is added."""
    lifetimes = Lifetimes(split_with_v_graph(), PAGE)
    x, v = lifetimes.index["X"], lifetimes.index["V"]
    for pages, added in ((7, (Chunk(v, 8, 2, 3, 3, 8, 8, "flash"),)), (8, ())):
        planned = Chunk(x, pages, 0, 1, 2, 9, 9)
        plan = gds_final_pass(Plan("g10", 10, 20, (planned,), strict=False), lifetimes,
                              np.full(10, 1e-3))
        assert plan.chunks == (planned, *added)
        assert (plan.policy, plan.strict) == ("g10", False)
