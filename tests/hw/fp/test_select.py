"""FPSelect: ``c[0] ? a : b`` bit for bit (NaN payloads included), the rest of ``c`` and
``op`` ignored, in Amaranth's simulator, Verilator and Icarus under random back-pressure;
and one result per cycle at the documented latency."""

import numpy as np
import pytest

from matndp.hw.fp.opcodes import OP_BITS, SelectOp
from matndp.hw.fp.select import FPSelect
from matndp.sim.flows.fp_vectors import run_fp_unit
from matndp.sim.golden.fp import SPECIAL_VALUES, mismatches, random_operands, reference

from .cases import results_at_full_rate


# One worker runs this file, so its simulator builds happen once and in turn.
pytestmark = pytest.mark.xdist_group("fp_select")


def golden(a, b, c):
    return reference("select", a, b, c)


def run(a, b, c, simulator, code=SelectOp.SELECT, seed=1):
    return run_fp_unit(FPSelect, code, a, b, c, simulator=simulator, back_pressure="random",
                       seed=seed)


def operands(count, seed):
    return random_operands("select", count, seed)


def test_mask_bit_picks_the_operand():
    a = np.array([0x3F800000, 0x3F800000, 0x7F800001, 0xFFFFFFFF], dtype=np.uint32)
    b = np.array([0x40000000, 0x40000000, 0x80000000, 0x00000001], dtype=np.uint32)
    c = np.array([1, 0, 0xFFFFFFFF, 0xFFFFFFFE], dtype=np.uint32)
    expected = [0x3F800000, 0x40000000, 0x7F800001, 0x00000001]
    assert golden(a, b, c).tolist() == expected
    assert run(a, b, c, "amaranth").tolist() == expected


@pytest.mark.parametrize("simulator, count", [
    ("amaranth", 1_000), ("icarus", 5_000), ("verilator", 20_000)])
def test_random_vectors(simulator, count):
    a, b, c = operands(count, seed=51)
    problems = mismatches(golden(a, b, c), run(a, b, c, simulator), a, b, c)
    assert not problems, "\n".join(problems)


def test_special_values_pass_unchanged_whatever_the_op_field():
    a = SPECIAL_VALUES
    b = SPECIAL_VALUES[::-1].copy()
    c = (np.arange(len(a)) % 2).astype(np.uint32)
    for code in range(1 << OP_BITS):
        actual = run(a, b, c, "amaranth", code=code, seed=code + 1)
        assert actual.tolist() == golden(a, b, c).tolist()


@pytest.mark.slow
def test_a_million_random_vectors_verilator():
    a, b, c = operands(1_000_000, seed=2029)
    problems = mismatches(golden(a, b, c), run(a, b, c, "verilator"), a, b, c)
    assert not problems, "\n".join(problems)


def test_one_result_per_cycle_after_latency():
    """With operands every cycle and the result always taken, the unit never stalls and
    each result appears LATENCY cycles after its record."""
    a, b, c = operands(16, seed=7)
    assert results_at_full_rate(FPSelect(), a=a, b=b, c=c) == golden(a, b, c).tolist()
