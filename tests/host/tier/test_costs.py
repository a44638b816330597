"""The planners' transfer cost estimates, from the tier and flash parameters."""

import pytest

from matndp.host.tier import TierConfig, flash_preset
from matndp.host.tier.costs import TransferCosts


def test_costs_of_zssd_behind_pcie():
    """Z-SSD reads at its 8 channels x 400 MB/s (its 32 dies x 2 planes x 4 KiB / 3 us are
    faster) and programs at 32 x 2 x 4 KiB / 100 us = 2.62 GB/s, both below the 31.5 GB/s
    link; a planned prefetch costs the 5 us request overhead plus tR, a write-out the
    overhead plus tPROG; G10's SSD and system latencies are tR and the 45 us fault."""
    costs = TransferCosts.of(TierConfig(hbm_fraction=0.5), flash_preset("zssd"))
    assert costs.read_s_per_byte == pytest.approx(1 / 3.2e9)
    assert costs.write_s_per_byte == pytest.approx(100e-6 / (32 * 2 * 4096))
    assert costs.read_latency_s == pytest.approx(5e-6 + 3e-6)
    assert costs.write_latency_s == pytest.approx(5e-6 + 100e-6)
    assert costs.flash_latency_s == pytest.approx(3e-6)
    assert costs.system_latency_s == pytest.approx(45e-6)


def test_a_slow_link_bounds_both_directions():
    costs = TransferCosts.of(TierConfig(hbm_fraction=0.5, link_bytes_per_s=1e9),
                             flash_preset("zssd", devices=8))
    assert costs.read_s_per_byte == pytest.approx(1e-9)
    assert costs.write_s_per_byte == pytest.approx(1e-9)


def test_with_host_dram_the_costs_are_those_of_the_move_to_host_memory():
    """Host DRAM at 20 GB/s behind a 31.5 GB/s link: 20 GB/s each way; a planned move
    costs the request overhead and host latency (2 + 3 us), flash has no part in it, and
    the system latency is the fault's."""
    tier = TierConfig(hbm_fraction=0.5, host_bytes=4096, host_bytes_per_s=20e9,
                      request_overhead_s=2e-6, host_latency_s=3e-6, fault_latency_s=7e-6)
    assert TransferCosts.of(tier, flash_preset("zssd")) == TransferCosts(
        read_s_per_byte=pytest.approx(1 / 20e9), write_s_per_byte=pytest.approx(1 / 20e9),
        read_latency_s=pytest.approx(5e-6), write_latency_s=pytest.approx(5e-6),
        flash_latency_s=0.0, system_latency_s=7e-6)
    fast_host = TransferCosts.of(TierConfig(hbm_fraction=0.5, host_bytes=4096), flash_preset("zssd"))
    assert fast_host.read_s_per_byte == pytest.approx(1 / 31.5e9)      # the link is slower
