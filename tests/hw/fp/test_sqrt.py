"""FPSqrt: bit-exact against MPFR (sim.golden.fp.reference) on directed and random
operands in Amaranth's simulator, Verilator and Icarus, under random back-pressure; and its
busy/ready handshake at the documented cycles per result."""

import numpy as np
import pytest

from matndp.hw.fp.sqrt import FPSqrt
from matndp.sim.flows.fp_vectors import run_fp_vectors
from matndp.sim.flows.fp_check import check_fp_op
from matndp.sim.golden.fp import directed_operands, random_floats, random_operands, reference

from .cases import results_back_to_back


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
                                         _perfect_squares_and_neighbours(64, seed=3)])],
                simulator=simulator)


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


def test_busy_handshake_and_cycles_per_result():
    a = np.array([0x40000000, 0x00000001, 0xBF800000, 0x7F7FFFFF], dtype=np.uint32)
    assert results_back_to_back(FPSqrt(), a=a) == reference("sqrt", a).tolist()
