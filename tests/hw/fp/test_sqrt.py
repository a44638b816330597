"""FPSqrt: bit-exact against MPFR (sim.golden.fp.reference) on directed and random
operands in Amaranth's simulator, Verilator and Icarus, under random back-pressure, and on
the roots closest to a half-way point, where the last remainder alone decides the
rounding; one result per cycle at the documented latency; every significand in the slow
suite."""

import functools
import math

import numpy as np
import pytest

from matndp.hw.fp.sqrt import FPSqrt
from matndp.sim.flows.fp_vectors import run_fp_vectors
from matndp.sim.flows.fp_check import check_fp_op
from matndp.sim.golden.fp import directed_operands, random_floats, random_operands, reference

from .cases import results_at_full_rate


# One worker runs this file, so its simulator builds happen once and in turn.
pytestmark = pytest.mark.xdist_group("fp_sqrt")


# Results worked out by hand, independent of any reference implementation.
KNOWN = [
    (0x40800000, 0x40000000),   # sqrt(4) = 2
    (0x3F800000, 0x3F800000),   # sqrt(1) = 1
    (0x40000000, 0x3FB504F3),   # sqrt(2)
    (0x00000000, 0x00000000),   # sqrt(+0) = +0
    (0x80000000, 0x80000000),   # sqrt(-0) = -0
    (0xBF800000, 0x7FC00000),   # sqrt(-1): NaN
    (0x80000001, 0x7FC00000),   # sqrt(-smallest subnormal): NaN
    (0xFF800000, 0x7FC00000),   # sqrt(-inf): NaN
    (0x7F800000, 0x7F800000),   # sqrt(+inf) = +inf
    (0x7F800001, 0x7FC00000),   # signalling NaN: canonical quiet NaN
    (0xFFFFFFFF, 0x7FC00000),
    (0x00000001, 0x1A3504F3),   # sqrt(2^-149) = 2^-75 sqrt(2)
    (0x00400000, 0x1FB504F3),   # sqrt(2^-127) = 2^-64 sqrt(2)
    (0x00800000, 0x20000000),   # sqrt(2^-126) = 2^-63
    (0x7F7FFFFF, 0x5F7FFFFF),   # sqrt(max): just below the tie 2^64 - 2^39, rounds down
    (0x4B800000, 0x45800000),   # sqrt(2^24) = 2^12
]


def _perfect_squares_and_neighbours(n, seed):
    """Squares of 12-bit significands (exact roots) and the encodings one ulp either side
    (roots just off a representable value), over the whole exponent range."""
    rng = np.random.default_rng(seed)
    root_significand = rng.integers(1 << 11, 1 << 12, n).astype(np.uint64)
    square = root_significand * root_significand           # 23 or 24 bits
    top = np.where(square >= (1 << 23), 23, 22).astype(np.uint64)
    fraction = ((square << (np.uint64(23) - top)) & np.uint64(0x7FFFFF)).astype(np.uint32)
    # square · 2^(exponent − 127 − top) has an exact root when that power is even.
    exponent = (2 * rng.integers(1, 126, n) + (127 + top) % 2).astype(np.uint32)
    bits = ((exponent << 23) | fraction).astype(np.uint32)
    step = rng.integers(-1, 2, n)
    return (bits.astype(np.int64) + step).astype(np.uint32)


def _significand_radicands(odd):
    """N = X · 2^25 (X · 2^26 for an odd exponent) for every significand X: the radicand
    whose integer root has the result's 24 bits and its guard bit."""
    significand = np.arange(1 << 23, 1 << 24, dtype=np.int64)
    return significand, significand << (25 + odd)


@functools.lru_cache(maxsize=None)
def near_midpoints(count):
    """The ``count`` operands per exponent parity whose roots lie closest to a half-way
    point between two binary32 values: N = m^2 + R for an odd m (a root whose guard bit is
    1 and whose lower bits are zero) and the smallest |R|. R is odd, so never 0: a square
    root is never exactly half-way. Exponents spread over the range (subnormal operands
    have normal roots of the same significands)."""
    rng = np.random.default_rng(count)
    operands = []
    for odd in (0, 1):
        significand, radicand = _significand_radicands(odd)
        root = np.sqrt(radicand.astype(np.float64)).astype(np.int64)
        root -= root * root > radicand              # floor, exactly
        root += (root + 1) * (root + 1) <= radicand
        middle = root | 1                           # the odd one of floor and floor + 1
        middle = np.where(middle > root + 1, middle - 2, middle)
        off = np.abs(radicand - middle * middle)
        chosen = significand[np.argsort(off, kind="stable")[:count]]
        # Biased exponents E of this parity: the unbiased E - 127 is odd for an even E.
        exponent = 2 * rng.integers(1, 127, count) + 1 - odd
        operands.append(((exponent << 23) | (chosen - (1 << 23))).astype(np.uint32))
    return np.concatenate(operands)


def _sqrt_operands(n, seed):
    quarter = n // 4
    generic = random_operands("sqrt", n - 2 * quarter, seed)[0]
    rng = np.random.default_rng(seed + 1)
    # Non-negative operands carry the arithmetic; the generic set covers the negatives.
    positive = random_floats(rng, quarter) & 0x7FFFFFFF
    return [np.concatenate([generic, positive, _perfect_squares_and_neighbours(quarter, seed)])]


def test_known_roots_match_the_reference_and_the_rtl():
    a, expected = (np.array(column, dtype=np.uint32) for column in zip(*KNOWN))
    assert reference("sqrt", a).tolist() == expected.tolist()
    actual = run_fp_vectors("sqrt", a, simulator="amaranth")
    assert [hex(x) for x in actual] == [hex(x) for x in expected]


@pytest.mark.parametrize("simulator", ["amaranth", "verilator", "icarus"])
def test_directed_table(simulator):
    check_fp_op("sqrt", [np.concatenate([directed_operands("sqrt")[0],
                                         _perfect_squares_and_neighbours(64, seed=3),
                                         near_midpoints(64)])],
                simulator=simulator)


def test_near_midpoints_lie_within_a_hair_of_one():
    """Their roots' bits below the guard bit are all zeros or all ones for 16 places."""
    bits = near_midpoints(64)
    significand = ((bits & 0x7FFFFF) | 0x800000).astype(object)
    odd = ((bits >> 23) & 1) == 0                   # biased exponent even: unbiased odd
    for x, doubled in zip(significand, odd):
        root = math.isqrt(x << (25 + int(doubled) + 32))
        assert root % (1 << 17) in (1 << 16, (1 << 16) - 1), hex(x)


@pytest.mark.parametrize("simulator, count", [
    ("amaranth", 300), ("icarus", 1_000), ("verilator", 20_000)])
def test_random_vectors(simulator, count):
    check_fp_op("sqrt", _sqrt_operands(count, seed=12), simulator=simulator, seed=6)


def test_random_set_reaches_the_edges():
    """Exact roots, subnormal operands and negative operands all occur."""
    a, = _sqrt_operands(20_000, seed=12)
    root = reference("sqrt", a)
    with np.errstate(invalid="ignore"):
        exact = root.view(np.float32).astype(np.float64) ** 2 == a.view(np.float32).astype(np.float64)
    assert np.sum(exact & (a != 0)) > 1000
    assert np.sum(((a >> 23) & 0xFF == 0) & (a & 0x7FFFFF != 0) & (a >> 31 == 0)) > 500
    assert np.sum(root == 0x7FC00000) > 1000


@pytest.mark.slow
def test_a_million_random_vectors_verilator():
    check_fp_op("sqrt", _sqrt_operands(1_000_000, seed=2025), simulator="verilator")


@pytest.mark.slow
def test_every_significand_at_both_exponent_parities_verilator():
    """Every 24-bit significand, doubled or not: every radicand the root steps see."""
    significand = np.arange(1 << 23, dtype=np.uint32)
    a = np.concatenate([np.uint32(127 << 23) | significand, np.uint32(128 << 23) | significand])
    check_fp_op("sqrt", [a.astype(np.uint32)], simulator="verilator", back_pressure="none")


def test_one_result_per_cycle_at_the_documented_latency():
    a = np.array([0x40000000, 0x00000001, 0xBF800000, 0x7F7FFFFF, 0x00000000, 0x80000000,
                  0x7F800000, 0x3F800000], dtype=np.uint32)
    assert results_at_full_rate(FPSqrt(), a=a) == reference("sqrt", a).tolist()
