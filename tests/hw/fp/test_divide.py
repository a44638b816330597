"""FPDivide: bit-exact against MPFR (sim.golden.fp.reference) on directed and random
operands in Amaranth's simulator, Verilator and Icarus, under random back-pressure; and its
busy/ready handshake at the documented cycles per result."""

import numpy as np
import pytest

from matndp.hw.fp.divide import FPDivide
from matndp.sim.flows.fp_vectors import run_fp_vectors
from matndp.sim.flows.fp_check import check_fp_op
from matndp.sim.golden.fp import directed_operands, random_floats, random_operands, reference

from .cases import results_back_to_back


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


def _directed():
    a, b = directed_operands("div")
    extra_a, extra_b = (np.array(column, dtype=np.uint32) for column in zip(*DIVISION_CASES))
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


def test_busy_handshake_and_cycles_per_result():
    records = [(0x3F800000, 0x40400000), (0x00000001, 0x7F7FFFFF), (0x7F800000, 0x00000000),
               (0x40C00000, 0x40400000)]
    a, b = (np.array(column, dtype=np.uint32) for column in zip(*records))
    assert results_back_to_back(FPDivide(), a=a, b=b) == reference("div", a, b).tolist()
