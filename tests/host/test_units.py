"""Numbers with units as the commands print them."""

import pytest

from matndp.host.units import format_bytes, format_joules, format_seconds, format_si, format_watts


@pytest.mark.parametrize("count, text", [(0, "0 B"), (512, "512 B"), (1023, "1023 B"), (1024, "1 KiB"),
                                         (1536, "1.5 KiB"), (2.07012e10, "19.3 GiB"),
                                         (3 * 2**20 + 2**18, "3.25 MiB"), (1023.9 * 2**30, "1024 GiB"),
                                         (5 * 2**50, "5 PiB")])
def test_bytes_are_binary(count, text):
    assert format_bytes(count) == text


@pytest.mark.parametrize("seconds, text", [(10.3, "10.3 s"), (0.0125, "12.5 ms"), (3.2e-6, "3.2 µs"),
                                           (0, "0 s"), (1234.0, "1.23 ks"), (2.5e-13, "0.25 ps")])
def test_seconds_take_si_prefixes(seconds, text):
    assert format_seconds(seconds) == text


def test_energy_power_and_other_units():
    assert format_joules(30.0213) == "30 J" and format_joules(0.55) == "550 mJ"
    assert format_watts(4.2e2) == "420 W"
    assert format_si(1.5e6, "cycles/s") == "1.5 Mcycles/s"
    assert format_si(float("inf"), "s") == "inf s"


def test_a_thousand_of_the_largest_prefix_has_no_exponent():
    assert format_bytes(1000 * 2**50) == "1000 PiB"
    assert format_si(1e18, "J") == "1000 PJ"
    assert format_si(1.0004e18, "J") == "1000 PJ"
