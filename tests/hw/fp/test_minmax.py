"""FPMinMax: IEEE 754-2019 minimum/maximum, bit-exact against sim.golden.fp.reference on
directed and random operands in Amaranth's simulator, Verilator and Icarus, under random
back-pressure; and one result per cycle at the documented latency."""

import numpy as np
import pytest

from matndp.hw.fp.minmax import FPMinMax
from matndp.hw.fp.units import operations_of
from matndp.sim.flows.fp_vectors import run_fp_vectors
from matndp.sim.flows.fp_check import check_fp_op
from matndp.sim.golden.fp import directed_operands, random_operands, reference

from .cases import interleaved, results_at_full_rate


# One worker runs this file, so its simulator builds happen once and in turn.
pytestmark = pytest.mark.xdist_group("fp_minmax")


OPS = [operation.name for operation in operations_of(FPMinMax)]

# (a, b, minimum, maximum), worked out by hand.
KNOWN = [
    (0x80000000, 0x00000000, 0x80000000, 0x00000000),   # -0 < +0
    (0x00000000, 0x80000000, 0x80000000, 0x00000000),
    (0x3F800000, 0x40000000, 0x3F800000, 0x40000000),   # 1, 2
    (0xBF800000, 0xC0000000, 0xC0000000, 0xBF800000),   # -1, -2
    (0x00000001, 0x00000000, 0x00000000, 0x00000001),   # smallest subnormal vs +0
    (0x80000001, 0x00000000, 0x80000001, 0x00000000),
    (0x007FFFFF, 0x00800000, 0x007FFFFF, 0x00800000),   # subnormal vs normal
    (0xFF800000, 0xFF7FFFFF, 0xFF800000, 0xFF7FFFFF),   # -inf below -max
    (0x7F800000, 0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000),
    (0x7FC00000, 0x3F800000, 0x7FC00000, 0x7FC00000),   # NaN propagates, either side
    (0x3F800000, 0xFFC00001, 0x7FC00000, 0x7FC00000),
    (0x7F800001, 0xFF800000, 0x7FC00000, 0x7FC00000),   # signalling NaN, canonical result
    (0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000),
]


@pytest.mark.parametrize("op", OPS)
def test_known_results_match_the_reference_and_the_rtl(op):
    a, b, minimum, maximum = (np.array(column, dtype=np.uint32) for column in zip(*KNOWN))
    expected = minimum if op == "min" else maximum
    assert reference(op, a, b).tolist() == expected.tolist()
    actual = run_fp_vectors(op, a, b, simulator="amaranth")
    assert [hex(x) for x in actual] == [hex(x) for x in expected]


@pytest.mark.parametrize("simulator", ["amaranth", "verilator", "icarus"])
@pytest.mark.parametrize("op", OPS)
def test_directed_table(op, simulator):
    check_fp_op(op, directed_operands(op), simulator=simulator)


@pytest.mark.parametrize("simulator, count", [
    ("amaranth", 1_000), ("icarus", 5_000), ("verilator", 20_000)])
@pytest.mark.parametrize("op", OPS)
def test_random_vectors(op, simulator, count):
    check_fp_op(op, random_operands(op, count, seed=21), simulator=simulator, seed=7)


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS)
def test_a_million_random_vectors_verilator(op):
    check_fp_op(op, random_operands(op, 1_000_000, seed=2026), simulator="verilator")


def test_one_result_per_cycle_after_latency():
    """With operands every cycle and the result always taken, the unit never stalls and
    each result appears LATENCY cycles after its record."""
    a, b = random_operands("min", 16, seed=4)
    codes, expected = interleaved(FPMinMax, {op: reference(op, a, b) for op in OPS})
    assert results_at_full_rate(FPMinMax(), a=a, b=b, op=codes) == expected
