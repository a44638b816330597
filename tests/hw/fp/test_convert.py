"""FPConvert: binary32 <-> bfloat16, bit-exact against sim.golden.fp.reference (MPFR at
bfloat16 precision for narrowing) on directed, random and (for widening) all 65536
operands, in Amaranth's simulator, Verilator and Icarus under random back-pressure; and
one result per cycle at the documented latency."""

import numpy as np
import pytest

from matndp.hw.fp.convert import FPConvert
from matndp.hw.fp.opcodes import ConvertOp
from matndp.sim.flows.fp_vectors import run_fp_vectors
from matndp.sim.flows.fp_check import check_fp_op
from matndp.sim.golden.fp import SPECIAL_VALUES, directed_operands, random_operands, reference

from .cases import interleaved, results_at_full_rate


# One worker runs this file, so its simulator builds happen once and in turn.
pytestmark = pytest.mark.xdist_group("fp_convert")


# (binary32, bfloat16), worked out by hand.
KNOWN_NARROWING = [
    (0x3F800000, 0x3F80),   # 1.0
    (0x3F808000, 0x3F80),   # tie, kept LSB even: down
    (0x3F818000, 0x3F82),   # tie, kept LSB odd: up
    (0x3F808001, 0x3F81),   # above the tie
    (0x3F807FFF, 0x3F80),   # below the tie
    (0x3FFF8000, 0x4000),   # rounding carry into the exponent
    (0x7F7F7FFF, 0x7F7F),   # largest bfloat16, just below its tie
    (0x7F7F8000, 0x7F80),   # tie above the largest bfloat16: overflows to inf
    (0x7F7FFFFF, 0x7F80),   # largest binary32: inf
    (0xFF7F8000, 0xFF80),   # -inf
    (0x7F800000, 0x7F80),   # inf stays inf
    (0x80000000, 0x8000),   # -0
    (0x00000001, 0x0000),   # far below the smallest bfloat16 subnormal
    (0x00008000, 0x0000),   # half the smallest bfloat16 subnormal: tie to even 0
    (0x00018000, 0x0002),   # 1.5 smallest subnormals: tie to even 2
    (0x00008001, 0x0001),   # just above half: smallest subnormal
    (0x007FFFFF, 0x0080),   # largest binary32 subnormal rounds up to the smallest normal
    (0x807F8000, 0x8080),
    (0x7F800001, 0x7FC0),   # signalling NaN: canonical quiet bfloat16 NaN
    (0xFFC00000, 0x7FC0),   # negative NaN: canonical
    (0x7FFF0000, 0x7FC0),   # NaN whose payload lives only in the kept bits
    (0x7F80FFFF, 0x7FC0),   # NaN whose payload lives only in the dropped bits
]

KNOWN_WIDENING = [
    (0x3F80, 0x3F800000),
    (0x8000, 0x80000000),
    (0x0001, 0x00010000),   # subnormal bfloat16: exact binary32 subnormal
    (0x7F7F, 0x7F7F0000),
    (0xFF80, 0xFF800000),
    (0x7F81, 0x7FC00000),   # NaN: canonical
    (0xFFFF, 0x7FC00000),
]


@pytest.mark.parametrize("op, table", [("f32_to_bf16", KNOWN_NARROWING),
                                       ("bf16_to_f32", KNOWN_WIDENING)])
def test_known_results_match_the_reference_and_the_rtl(op, table):
    a, expected = (np.array(column, dtype=np.uint32) for column in zip(*table))
    assert reference(op, a).tolist() == expected.tolist()
    actual = run_fp_vectors(op, a, simulator="amaranth")
    assert [hex(x) for x in actual] == [hex(x) for x in expected]


def _narrowing_directed():
    # Every special value with each dropped-half pattern that matters for rounding.
    base = SPECIAL_VALUES & 0xFFFF0000
    dropped = np.array([0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=np.uint32)
    crossed = (base[:, None] | dropped[None, :]).ravel()
    return [np.concatenate([directed_operands("f32_to_bf16")[0], crossed,
                            np.array([row[0] for row in KNOWN_NARROWING], dtype=np.uint32)])]


@pytest.mark.parametrize("simulator", ["amaranth", "verilator", "icarus"])
def test_narrowing_directed_table(simulator):
    check_fp_op("f32_to_bf16", _narrowing_directed(), simulator=simulator)


@pytest.mark.parametrize("simulator, count", [
    ("amaranth", 1_000), ("icarus", 5_000), ("verilator", 20_000)])
def test_narrowing_random_vectors(simulator, count):
    check_fp_op("f32_to_bf16", random_operands("f32_to_bf16", count, seed=31),
                simulator=simulator, seed=8)


@pytest.mark.parametrize("simulator, operands", [
    ("amaranth", directed_operands("bf16_to_f32")),
    ("icarus", random_operands("bf16_to_f32", 5_000, seed=32)),
    ("verilator", [np.arange(1 << 16, dtype=np.uint32)]),   # every bfloat16
])
def test_widening(simulator, operands):
    check_fp_op("bf16_to_f32", operands, simulator=simulator, seed=9)


@pytest.mark.slow
def test_a_million_random_narrowings_verilator():
    check_fp_op("f32_to_bf16", random_operands("f32_to_bf16", 1_000_000, seed=2027),
                simulator="verilator")


@pytest.mark.slow
def test_widening_all_bfloat16_icarus():
    check_fp_op("bf16_to_f32", [np.arange(1 << 16, dtype=np.uint32)], simulator="icarus")


def test_high_half_of_a_bfloat16_operand_is_ignored():
    """The unit reads only the low 16 bits for widening (run_fp_vectors refuses wider
    patterns, so this drives the unit directly)."""
    from matndp.sim.flows.fp_amaranth import run_unit
    low = np.array([0x3F80, 0x0001, 0xFF80, 0x7FC1], dtype=np.uint32)
    noisy = low | np.array([0xFFFF0000, 0x12340000, 0x80000000, 0x7F800000], dtype=np.uint32)
    zeros = np.zeros(len(low), dtype=np.uint32)
    actual = run_unit(FPConvert(), ConvertOp.BF16_TO_F32.value, noisy, zeros, zeros,
                      pause=(77, 77), seed=3)
    assert actual.tolist() == reference("bf16_to_f32", low).tolist()


def test_one_result_per_cycle_after_latency():
    """With operands every cycle and the result always taken, the unit never stalls and
    each result appears LATENCY cycles after its record; the two operations interleave."""
    a, = random_operands("f32_to_bf16", 16, seed=5)
    # Narrowing records take full words, widening ones bfloat16 patterns.
    widening = np.arange(len(a)) % 2 == 1
    a = np.where(widening, a >> 16, a).astype(np.uint32)
    codes, expected = interleaved(FPConvert, {"f32_to_bf16": reference("f32_to_bf16", a),
                                              "bf16_to_f32": reference("bf16_to_f32", a & 0xFFFF)})
    assert [code is ConvertOp.BF16_TO_F32 for code in codes] == widening.tolist()
    assert results_at_full_rate(FPConvert(), a=a, op=codes) == expected
