"""Divisor descriptors: exact for every dividend of the range, refused when none exists."""

import re

from hypothesis import given, settings, strategies as st
import pytest

from matndp.hw.engine.isa import DIVISOR_FIELDS
from matndp.host.kernels.divisor import (MAX_DIVIDEND, DivisorDescriptor, NoDescriptorError,
                                         divisor_descriptor)


def _valid_multipliers(divisor, max_dividend, shift):
    """Every multiplier m (as an interval) with floor(n·m / 2^shift) == n // d for all n in
    0 … max_dividend, by brute force over n: q·2^k ≤ n·m < (q + 1)·2^k."""
    low, high = 0, (1 << 32) - 1
    for n in range(1, max_dividend + 1):
        q = n // divisor
        low = max(low, -(-(q << shift) // n))
        high = min(high, (((q + 1) << shift) - 1) // n)
    return low, high


@pytest.mark.parametrize("divisor", range(1, 41))
def test_exhaustively_for_small_divisors_and_ranges(divisor):
    for max_dividend in (0, 1, divisor - 1, divisor, 3 * divisor + 1, 300, 1000):
        max_dividend = max(0, max_dividend)
        exists = any(low <= high for low, high in
                     (_valid_multipliers(divisor, max_dividend, k) for k in range(64)))
        if not exists:
            with pytest.raises(NoDescriptorError):
                divisor_descriptor(divisor, max_dividend)
            continue
        descriptor = divisor_descriptor(divisor, max_dividend)
        assert all(descriptor.quotient(n) == n // divisor for n in range(max_dividend + 1))


def test_refusals_exist_for_full_range_and_vanish_for_smaller_ones():
    with pytest.raises(NoDescriptorError, match="lower the maximum dividend"):
        divisor_descriptor(7)
    descriptor = divisor_descriptor(7, (1 << 31) - 1)
    for n in (0, 6, 7, (1 << 31) - 1, (1 << 31) - 2, 7 * 306783378 - 1):
        assert descriptor.quotient(n) == n // 7


def test_dividends_below_the_divisor_have_quotient_zero():
    descriptor = divisor_descriptor(1000, 999)
    assert descriptor.multiplier == 0 and descriptor.quotient(999) == 0


def test_one_and_powers_of_two():
    assert divisor_descriptor(1) == DivisorDescriptor(1, 1, 0)
    for j in range(24):
        descriptor = divisor_descriptor(1 << j)
        assert descriptor.quotient(MAX_DIVIDEND) == MAX_DIVIDEND >> j


def test_word_layout():
    descriptor = DivisorDescriptor(divisor=3136, multiplier=0x12345678, shift=45)
    word = descriptor.word
    assert word & 0xFFFFFFFF == 0x12345678
    assert (word >> DIVISOR_FIELDS["shift"][0]) & 63 == 45
    assert word >> DIVISOR_FIELDS["divisor"][0] == 3136
    assert DivisorDescriptor.from_word(word) == descriptor


@settings(max_examples=300, deadline=None)
@given(st.integers(1, (1 << 24) - 1), st.integers(0, MAX_DIVIDEND), st.data())
def test_large_divisors_are_exact_wherever_a_descriptor_is_given(divisor, max_dividend, data):
    try:
        descriptor = divisor_descriptor(divisor, max_dividend)
    except NoDescriptorError:
        # A refusal needs max_dividend ≥ d (below it the multiplier 0 serves); then any
        # multiplier under ceil(2^k / d) fails at n = d and any above it fails wherever
        # ceil(2^k / d) does, so a concrete failing dividend for ceil(2^k / d) at every
        # shift whose multiplier fits proves that no descriptor exists.
        assert max_dividend >= divisor
        for shift in range(64):
            m = -(-(1 << shift) // divisor)
            if m >= 1 << 32:
                break
            top = max_dividend - (max_dividend - (divisor - 1)) % divisor \
                if max_dividend >= divisor - 1 else max_dividend
            assert any((n * m) >> shift != n // divisor for n in {top, max_dividend})
        return
    picks = data.draw(st.lists(st.integers(0, max_dividend), max_size=50))
    edges = [max_dividend, max(0, max_dividend - 1)] + \
        [max(0, (max_dividend // divisor) * divisor - 1 - k) for k in range(3)]
    for n in picks + edges:
        assert descriptor.quotient(n) == n // divisor


@pytest.mark.parametrize("divisor, max_dividend, error, names", [
    (0, 10, ValueError, "divisor 0"), (1 << 24, 10, ValueError, f"divisor {1 << 24}"),
    (3, -1, ValueError, "-1"), (3, 1 << 32, ValueError, str(1 << 32)),
    (3.0, 10, TypeError, "divisor must be an int, not 3.0"),
    (3, True, TypeError, "max_dividend must be an int, not True"),
])
def test_argument_errors(divisor, max_dividend, error, names):
    with pytest.raises(error, match=re.escape(names)):
        divisor_descriptor(divisor, max_dividend)
