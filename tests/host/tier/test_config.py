"""The tier configuration: every refusal names its field and the value given; the derived
capacities follow from their definitions."""

import re

import pytest

from matndp.host.tier.config import TierConfig


PAGE = 4096


@pytest.mark.parametrize("fields, message", [
    ({}, "tier: give exactly one of hbm_bytes and hbm_fraction"),
    ({"hbm_bytes": PAGE, "hbm_fraction": 0.5}, "tier: give exactly one of hbm_bytes and hbm_fraction"),
    ({"hbm_fraction": 0.0}, "tier: HBM fraction must be > 0, got 0.0"),
    ({"hbm_bytes": -PAGE}, "tier: HBM capacity must be > 0 bytes, got -4096"),
    ({"hbm_bytes": 1e9 + 0.5}, "tier: HBM capacity must be a whole number of bytes, got 1000000000.5"),
    ({"hbm_bytes": True}, "tier: HBM capacity must be a whole number of bytes, got True"),
    ({"hbm_bytes": PAGE, "page_bytes": 511}, "tier: page_bytes must be an integer >= 512, got 511"),
    ({"hbm_bytes": PAGE, "page_bytes": 4096.0},
     "tier: page_bytes must be an integer >= 512, got 4096.0"),
    ({"hbm_bytes": PAGE, "link_bytes_per_s": 0.0}, "tier: link_bytes_per_s must be positive"),
    ({"hbm_bytes": PAGE, "host_bytes_per_s": -1.0}, "tier: host_bytes_per_s must be positive"),
    ({"hbm_bytes": PAGE, "host_bytes": -1}, "tier: host_bytes must be an integer >= 0, got -1"),
    ({"hbm_bytes": PAGE, "host_bytes": 2.0}, "tier: host_bytes must be an integer >= 0, got 2.0"),
    ({"hbm_bytes": PAGE, "fault_batch_pages": 0},
     "tier: fault_batch_pages must be an integer >= 1, got 0"),
    ({"hbm_bytes": PAGE, "fault_batch_pages": 1.0},
     "tier: fault_batch_pages must be an integer >= 1, got 1.0"),
    ({"hbm_bytes": PAGE, "host_demotes": 1}, "tier: host_demotes must be true or false, got 1"),
    ({"hbm_bytes": PAGE, "link_duplex": "yes"},
     "tier: link_duplex must be true or false, got 'yes'"),
    ({"hbm_bytes": PAGE, "request_overhead_s": -1e-9}, "tier: request_overhead_s must not be negative"),
    ({"hbm_bytes": PAGE, "fault_latency_s": -1e-9}, "tier: fault_latency_s must not be negative"),
    ({"hbm_bytes": PAGE, "link_j_per_byte": -1.0}, "tier: link_j_per_byte must not be negative"),
    ({"hbm_bytes": PAGE, "hbm_cost_usd_per_gb": -1.0}, "tier: hbm_cost_usd_per_gb must not be negative"),
    ({"hbm_bytes": PAGE, "host_latency_s": -1e-9}, "tier: host_latency_s must not be negative"),
    ({"hbm_bytes": PAGE, "host_cost_usd_per_gb": -1.0},
     "tier: host_cost_usd_per_gb must not be negative"),
])
def test_each_refusal_names_its_field_and_value(fields, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        TierConfig(**fields)


@pytest.mark.parametrize("fields", [
    {"hbm_bytes": 1},                                    # a single byte is a capacity
    {"hbm_fraction": 1e-6},
    {"hbm_bytes": PAGE, "page_bytes": 512},              # the smallest page
    {"hbm_bytes": PAGE, "host_bytes": 0},                # the two-tier system
    {"hbm_bytes": PAGE, "fault_batch_pages": 1},
    {"hbm_bytes": PAGE, "request_overhead_s": 0.0, "fault_latency_s": 0.0, "link_j_per_byte": 0.0,
     "hbm_cost_usd_per_gb": 0.0, "host_latency_s": 0.0, "host_cost_usd_per_gb": 0.0},
])
def test_the_bounds_themselves_are_accepted(fields):
    TierConfig(**fields)


def test_host_pages_are_whole_pages_of_host_dram():
    assert TierConfig(hbm_bytes=PAGE, host_bytes=10 * PAGE + PAGE - 1).host_pages == 10
    assert TierConfig(hbm_bytes=PAGE, host_bytes=3 * 1024, page_bytes=1024).host_pages == 3
    assert TierConfig(hbm_bytes=PAGE).host_pages == 0


def test_capacity_is_absolute_or_a_share_of_the_footprint_in_whole_bytes():
    assert TierConfig(hbm_bytes=7 * PAGE).capacity_bytes(1000 * PAGE) == 7 * PAGE
    by_share = TierConfig(hbm_fraction=0.25).capacity_bytes(1001)
    assert by_share == 250 and isinstance(by_share, int)
