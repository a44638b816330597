import re

import pytest

from matndp.host.tier.flash import FLASH_PRESETS, FlashConfig, FlashDevice, flash_preset


def tiny(**overrides):
    # One channel, one die, one plane; a page crosses the bus in 1 µs.
    fields = dict(name="tiny", channels=1, dies_per_channel=1, planes_per_die=1, page_bytes=4096,
                  read_latency_s=10e-6, program_latency_s=100e-6, channel_bytes_per_s=4096e6,
                  read_energy_j_per_page=1e-6, program_energy_j_per_page=5e-6,
                  bus_energy_j_per_byte=0.0, cost_usd_per_gb=1.0)
    fields.update(overrides)
    return FlashConfig(**fields)


def test_one_page_read_is_array_read_then_bus():
    assert FlashDevice(tiny()).read(4096, at=0.0) == pytest.approx(11e-6)


def test_a_partial_page_costs_a_whole_page():
    device = FlashDevice(tiny())
    assert device.read(100, at=0.0) == pytest.approx(11e-6)
    assert device.stats["page_reads"] == 1


def test_reads_on_one_die_are_bound_by_the_array():
    # 4 pages: array reads end at 40 µs, the last page then crosses the bus (1 µs).
    assert FlashDevice(tiny()).read(4 * 4096, at=0.0) == pytest.approx(41e-6)


def test_reads_on_one_die_are_bound_by_the_bus_when_it_is_slower():
    # Bus 20 µs per page: first page ready at 10 µs, then 4 × 20 µs on the bus.
    device = FlashDevice(tiny(channel_bytes_per_s=4096 / 20e-6))
    assert device.read(4 * 4096, at=0.0) == pytest.approx(90e-6)


def test_pages_spread_over_channels_in_parallel():
    # 2 channels × 1 die: 2 pages take as long as one.
    assert FlashDevice(tiny(channels=2)).read(2 * 4096, at=0.0) == pytest.approx(11e-6)


def test_multi_plane_reads_sense_planes_pages_at_once():
    # 2 planes: 2 pages in one array read (10 µs), then 2 bus transfers.
    assert FlashDevice(tiny(planes_per_die=2)).read(2 * 4096, at=0.0) == pytest.approx(12e-6)


def test_program_is_bus_then_array():
    assert FlashDevice(tiny()).program(4096, at=0.0) == pytest.approx(101e-6)


def test_a_read_queues_behind_a_program_on_the_same_die():
    device = FlashDevice(tiny())
    device.program(4096, at=0.0)             # die busy until 101 µs
    # Array read 101..111 µs, then the page crosses the (idle) bus: 112 µs.
    assert device.read(4096, at=0.0) == pytest.approx(112e-6)


def test_a_duplex_device_reads_while_it_programs():
    """Separate read and program resources: the read of the test above no longer waits
    for the program (11 µs, as on an idle device), and the program still takes 101 µs."""
    device = FlashDevice(tiny(duplex=True))
    assert device.program(4096, at=0.0) == pytest.approx(101e-6)
    assert device.read(4096, at=0.0) == pytest.approx(11e-6)
    # Programs still queue behind programs.
    assert device.program(4096, at=0.0) == pytest.approx(201e-6)


def test_back_to_back_reads_queue_per_die():
    device = FlashDevice(tiny())
    device.read(4096, at=0.0)                # die free at 10 µs, bus free at 11 µs
    assert device.read(4096, at=0.0) == pytest.approx(21e-6)


def test_energy_and_page_counters():
    device = FlashDevice(tiny())
    device.read(3 * 4096, at=0.0)
    device.program(2 * 4096, at=0.0)
    assert device.stats["page_reads"] == 3 and device.stats["page_programs"] == 2
    assert device.stats["energy_j"] == pytest.approx(3 * 1e-6 + 2 * 5e-6)


def test_presets_sustain_their_cited_bandwidths():
    zssd, tlc = FLASH_PRESETS["zssd"], FLASH_PRESETS["tlc"]
    assert zssd.read_bytes_per_s == pytest.approx(8 * 400e6)          # SZ985: 3.2 GB/s
    assert zssd.program_bytes_per_s == pytest.approx(32 * 2 * 4096 / 100e-6)
    assert tlc.read_bytes_per_s == pytest.approx(8 * 800e6)
    assert tlc.program_bytes_per_s == pytest.approx(32 * 2 * 16384 / 600e-6)
    assert flash_preset("zssd", devices=4).read_bytes_per_s == pytest.approx(4 * 3.2e9)


@pytest.mark.parametrize("overrides, message", [
    ({"channels": 0}, "channels"),
    ({"page_bytes": 1.5}, "page_bytes"),
    ({"read_latency_s": 0.0}, "read_latency_s"),
    ({"cost_usd_per_gb": -1.0}, "cost_usd_per_gb"),
    ({"duplex": "yes"}, "duplex must be true or false"),
])
def test_bad_flash_configuration_is_refused_by_name(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny(**overrides)


def test_unknown_preset_is_refused():
    with pytest.raises(ValueError, match="unknown flash preset 'qlc'"):
        flash_preset("qlc")


def test_every_counter_counts_requests_pages_and_bus_bytes():
    """Two reads and one program (an empty read is no request): each request counted once,
    every page crossing the bus with its array and interface energy."""
    device = FlashDevice(tiny(bus_energy_j_per_byte=1e-9))
    device.read(3 * 4096, at=0.0)
    assert device.read(0, at=5.0) == 5.0
    assert device.program(0, at=7.0) == 7.0
    device.program(2 * 4096 - 1, at=0.0)
    device.read(1, at=0.0)
    energy = 4 * (1e-6 + 4096e-9) + 2 * (5e-6 + 4096e-9)
    assert device.stats == {"page_reads": 4, "page_programs": 2, "read_requests": 2,
                            "program_requests": 1, "bus_bytes": 6 * 4096,
                            "energy_j": pytest.approx(energy)}


@pytest.mark.parametrize("overrides, message", [
    ({"dies_per_channel": 0}, "flash 'tiny': dies_per_channel must be a positive integer, got 0"),
    ({"planes_per_die": 2.0}, "flash 'tiny': planes_per_die must be a positive integer, got 2.0"),
    ({"devices": 0}, "flash 'tiny': devices must be a positive integer, got 0"),
    ({"duplex": 1}, "flash 'tiny': duplex must be true or false, got 1"),
    ({"program_latency_s": -1.0}, "flash 'tiny': program_latency_s must be positive"),
    ({"channel_bytes_per_s": 0.0}, "flash 'tiny': channel_bytes_per_s must be positive"),
    ({"read_energy_j_per_page": -1.0}, "flash 'tiny': read_energy_j_per_page must not be negative"),
    ({"program_energy_j_per_page": -1.0},
     "flash 'tiny': program_energy_j_per_page must not be negative"),
    ({"bus_energy_j_per_byte": -1.0}, "flash 'tiny': bus_energy_j_per_byte must not be negative"),
])
def test_each_flash_refusal_is_one_whole_message(overrides, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        tiny(**overrides)
