"""Numbers with units as the commands print them."""

import pytest

from matndp.host.units import format_bytes, format_joules, format_seconds, format_si, format_watts


@pytest.mark.parametrize("count, text", [(0, "0 B"), (512, "512 B"), (999, "999 B"), (1000, "1 kB"),
                                         (1536, "1.54 kB"), (2.07012e10, "20.7 GB"),
                                         (3.25e6, "3.25 MB"), (999.9e9, "1000 GB"),
                                         (5e15, "5 PB"), (0.5, "0.5 B")])
def test_bytes_are_decimal_like_every_size_the_commands_take(count, text):
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
    assert format_bytes(1000e15) == "1000 PB"
    assert format_si(1e18, "J") == "1000 PJ"
    assert format_si(1.0004e18, "J") == "1000 PJ"
