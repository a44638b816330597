"""FPDivide: bit-exact against MPFR (sim.golden.fp.reference) on directed and random
operands in Amaranth's simulator, Verilator and Icarus, under random back-pressure, and on
the cases where the recurrence's last remainder alone decides the rounding; one result
per cycle at the documented latency."""

import numpy as np
import pytest

from matndp.hw.fp.divide import FPDivide
from matndp.sim.flows.fp_vectors import run_fp_vectors
from matndp.sim.flows.fp_check import check_fp_op
from matndp.sim.golden.fp import (bits_to_float, directed_operands, random_floats,
                                  random_operands, reference)

from .cases import results_at_full_rate


# One worker runs this file, so its simulator builds happen once and in turn.
pytestmark = pytest.mark.xdist_group("fp_divide")


# Results worked out by hand, independent of any reference implementation.
KNOWN = [
    (0x3F800000, 0x40400000, 0x3EAAAAAB),   # 1/3: 0.0101...01|01... rounds up
    (0x40C00000, 0x40400000, 0x40000000),   # 6/3 = 2 exactly
    (0x00000000, 0x00000000, 0x7FC00000),   # 0/0
    (0x7F800000, 0xFF800000, 0x7FC00000),   # inf/-inf
    (0x80000000, 0x3F800000, 0x80000000),   # -0/1 = -0
    (0x3F800000, 0x80000000, 0xFF800000),   # 1/-0 = -inf
    (0x00000001, 0x00000000, 0x7F800000),   # tiny/0 = inf
    (0xFF800000, 0x40000000, 0xFF800000),   # -inf/2
    (0x3F800000, 0x7F800000, 0x00000000),   # 1/inf = +0
    (0xBF800000, 0x7F800000, 0x80000000),   # -1/inf = -0
    (0x7FC00000, 0x3F800000, 0x7FC00000),   # NaN in a
    (0x3F800000, 0xFF800001, 0x7FC00000),   # signalling NaN in b: canonical quiet NaN
    (0x00800000, 0x40000000, 0x00400000),   # smallest normal / 2: exact subnormal
    (0x00000001, 0x40000000, 0x00000000),   # 2^-150: tie, to even 0
    (0x00000003, 0x40000000, 0x00000002),   # 1.5 * 2^-149: tie, to even 2 * 2^-149
    (0x00000001, 0x3F000000, 0x00000002),   # 2^-149 / 0.5 = 2^-148
    (0x00800000, 0x3F800001, 0x007FFFFF),   # just below the smallest normal
    (0x3F800000, 0x7F7FFFFF, 0x00200000),   # 1/max: 2^-128 (1 + 2^-24 ...), subnormal
    (0x7F7FFFFF, 0x3F000000, 0x7F800000),   # max / 0.5 overflows
    (0x7F7FFFFF, 0x3F7FFFFF, 0x7F800000),   # max / (1 - 2^-24) = 2^128 overflows
    (0x7F7FFFFF, 0x3F800000, 0x7F7FFFFF),   # max / 1
    (0x00000001, 0x7F7FFFFF, 0x00000000),   # far below the smallest subnormal
    (0x007FFFFF, 0x00000001, 0x4AFFFFFE),   # largest / smallest subnormal = 2^23 - 1
]

# Quotients on the boundaries of division specifically.
DIVISION_CASES = [
    (0x3F800000, 0x3F800001),   # 1/(1+u): quotient below 1, guard bit decides
    (0x3F800001, 0x3F800000),
    (0x3F7FFFFF, 0x3F800000),
    (0x3F800000, 0x3F7FFFFF),   # just above 1
    (0x3FFFFFFF, 0x3F800001),   # rounding carry to the next binade
    (0x00FFFFFF, 0x40000000),   # largest subnormal result, rounds up to the smallest normal
    (0x00FFFFFE, 0x40000000),
    (0x00800001, 0x40000000),   # tie in the subnormal range
    (0x00800003, 0x40000000),
    (0x00800000, 0x4B000000),   # 2^-126 / 2^23 = 2^-149 exactly
    (0x00800000, 0x4B800000),   # 2^-150: tie to 0
    (0x00800001, 0x4B800000),   # just above 2^-150: smallest subnormal
    (0x7F000000, 0x3F000000),   # 2^127 / 0.5 = 2^128: overflow
    (0x7EFFFFFF, 0x3F000000),   # largest finite exactly
    (0x7F7FFFFF, 0x3F7FFFFE),
    (0x7F7FFFFF, 0x00000001),   # max / smallest subnormal
    (0x00000001, 0x00800000),   # 2^-149 / 2^-126 = 2^-23, normal from subnormal
    (0x00000001, 0x007FFFFF),
    (0x00400000, 0x00200000),   # subnormal / subnormal
    (0x40490FDB, 0x402DF854),   # pi / e
]


def _division_operands(n, seed):
    """Half the generic biased set, a quarter with close operands (quotients near 1), a
    quarter with divisors chosen so that quotients land near the underflow and overflow
    boundaries."""
    rng = np.random.default_rng(seed)
    quarter = n // 4
    generic = random_operands("div", n - 2 * quarter, seed)
    close = random_operands("min", quarter, seed + 1)
    a = random_floats(rng, quarter)
    exponent_a = ((a >> 23) & 0xFF).astype(np.int64)
    target = rng.choice(np.array([-24, -23, -1, 0, 1, 2, 253, 254, 255]), quarter)
    exponent_b = np.clip(exponent_a - target + 127 + rng.integers(-1, 2, quarter), 0, 254)
    b = ((rng.integers(0, 2, quarter, dtype=np.uint32) << 31)
         | (exponent_b.astype(np.uint32) << 23)
         | rng.integers(0, 1 << 23, quarter, dtype=np.uint32)).astype(np.uint32)
    return [np.concatenate([generic[0], close[0], a]),
            np.concatenate([generic[1], close[1], b])]


_SIGNIFICAND_MIN = 1 << 23


def _near_midpoints(count, seed):
    """Quotients of normal range just off a half-way point between two binary32 values,
    on either side, where the guard bit is 1 and the last remainder alone decides the
    rounding: for a divisor significand B (odd) and a small odd R, the dividend
    significand A with A · 2^s = (2k + 1) · B + R (s = 24 for quotients in [1, 2), 25 in
    (1/2, 1)), so that A / B lies R / B units of the last place's half off the half-way
    point (2k + 1) · 2^-s. A quotient exactly half-way is impossible in the normal range."""
    rng = np.random.default_rng(seed)
    pairs = []
    while len(pairs) < count:
        divisor = int(rng.integers(_SIGNIFICAND_MIN, 2 * _SIGNIFICAND_MIN)) | 1
        remainder = int(rng.choice([-7, -5, -3, -1, 1, 3, 5, 7]))
        for scale, low, high in ((24, divisor, 2 * _SIGNIFICAND_MIN),
                                 (25, _SIGNIFICAND_MIN, divisor)):
            dividend = remainder * pow(1 << scale, -1, divisor) % divisor
            dividend += -(-(low - dividend) // divisor) * divisor   # the first at or above low
            if dividend < high:
                exponent_a = int(rng.integers(2, 253))
                exponent_b = int(np.clip(exponent_a + rng.integers(-100, 101), 2, 253))
                sign = int(rng.integers(0, 2)) << 31
                pairs.append((sign | exponent_a << 23 | dividend - _SIGNIFICAND_MIN,
                               exponent_b << 23 | divisor - _SIGNIFICAND_MIN))
    return pairs[:count]


def _subnormal_ties(count, seed):
    """Quotients exactly half-way between two subnormals ((2j + 1) · 2^-150, which
    division reaches only below the normal range), by powers of two and by odd divisors
    of up to 12 bits, and the dividends one unit either side of them."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(count):
        divisor_odd = int(rng.integers(0, 1 << 11)) * 2 + 1
        half_ulps = int(rng.integers(0, 1 << 11)) * 2 + 1
        scale = int(rng.integers(1, 100))
        # a = (2j + 1) · 2^-150 · divisor_odd · 2^scale, exact in 24 bits.
        dividend = float(half_ulps * divisor_odd) * 2.0 ** (scale - 150)
        divisor = float(divisor_odd) * 2.0 ** scale
        a, b = (int(x) for x in np.array([dividend, divisor], dtype=np.float32).view(np.uint32))
        pairs += [(a, b), (a + 1, b), (a - 1, b)]
    return pairs


def _directed():
    a, b = directed_operands("div")
    cases = DIVISION_CASES + _near_midpoints(200, seed=1) + _subnormal_ties(100, seed=2)
    extra_a, extra_b = (np.array(column, dtype=np.uint32) for column in zip(*cases))
    # Each case also with the signs flipped and with the operands swapped.
    return [np.concatenate([a, extra_a, extra_a ^ 0x80000000, extra_b]),
            np.concatenate([b, extra_b, extra_b, extra_a])]


def test_known_quotients_match_the_reference_and_the_rtl():
    a, b, expected = (np.array(column, dtype=np.uint32) for column in zip(*KNOWN))
    assert reference("div", a, b).tolist() == expected.tolist()
    actual = run_fp_vectors("div", a, b, simulator="amaranth")
    assert [hex(x) for x in actual] == [hex(x) for x in expected]


@pytest.mark.parametrize("simulator", ["verilator", "icarus"])
def test_directed_table(simulator):
    check_fp_op("div", _directed(), simulator=simulator)


@pytest.mark.parametrize("simulator, count", [
    ("amaranth", 300), ("icarus", 1_000), ("verilator", 20_000)])
def test_random_vectors(simulator, count):
    check_fp_op("div", _division_operands(count, seed=11), simulator=simulator, seed=5)


def test_random_set_reaches_the_edges():
    """The random set must exercise what it is meant to: subnormal, overflowing and NaN
    quotients, and quotients either side of 1."""
    a, b = _division_operands(20_000, seed=11)
    quotient = reference("div", a, b)
    exponent = (quotient >> 23) & 0xFF
    fraction = quotient & 0x7FFFFF
    assert np.sum((exponent == 0) & (fraction != 0)) > 500
    assert np.sum(quotient & 0x7FFFFFFF == 0x7F800000) > 500
    assert np.sum(quotient == 0x7FC00000) > 100
    significand_ratio = (a & 0x7FFFFF) < (b & 0x7FFFFF)
    assert 0.2 < significand_ratio.mean() < 0.8


@pytest.mark.slow
def test_a_million_random_vectors_verilator():
    check_fp_op("div", _division_operands(1_000_000, seed=2024), simulator="verilator")


@pytest.mark.slow
def test_every_divisor_significand_verilator():
    """1 / b for each of the 2^23 significands of b: every divisor through every step."""
    divisor = (np.uint32(127 << 23) | np.arange(1 << 23, dtype=np.uint32)).astype(np.uint32)
    check_fp_op("div", [np.full(len(divisor), 0x3F800000, dtype=np.uint32), divisor],
                simulator="verilator", back_pressure="none")


@pytest.mark.parametrize("family", [_near_midpoints, _subnormal_ties])
def test_remainder_decided_roundings_in_amaranth(family):
    a, b = (np.array(column, dtype=np.uint32) for column in zip(*family(40, seed=3)))
    check_fp_op("div", [a, b], simulator="amaranth", seed=4)


def test_the_families_reach_their_rounding_points():
    """Near a half-way point the quotient's bits below the guard bit are all zeros or all
    ones for many places (a remainder of a few units of 2^-49 relative); the subnormal
    ties are exactly half-way."""
    a, b = (np.array(column, dtype=np.uint32) for column in zip(*_near_midpoints(200, seed=1)))
    significand_a = ((a & 0x7FFFFF) | 0x800000).astype(object)
    significand_b = ((b & 0x7FFFFF) | 0x800000).astype(object)
    for x, y in zip(significand_a, significand_b):
        scale = 24 if x >= y else 25
        quotient, remainder = divmod(x << (scale + 20), y)
        assert quotient % (1 << 21) in (1 << 20, (1 << 20) - 1), (hex(x), hex(y))
    ties = _subnormal_ties(100, seed=2)[::3]
    a, b = (np.array(column, dtype=np.uint32) for column in zip(*ties))
    half_ulps = bits_to_float(a) / bits_to_float(b) * 2.0 ** 150      # exact
    assert np.all(half_ulps % 2 == 1)


def test_one_result_per_cycle_at_the_documented_latency():
    a, b = random_operands("div", 40, seed=8)
    assert results_at_full_rate(FPDivide(), a=a, b=b) == reference("div", a, b).tolist()
