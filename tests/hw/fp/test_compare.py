"""FPCompare: the quiet IEEE predicates ==, <, <= as a 1/0 lane mask, against Berkeley
SoftFloat (softfloatpy) on all pairs of special values and on random close operands, in
Amaranth's simulator, Verilator and Icarus under random back-pressure; and one result per
cycle at the documented latency."""

import numpy as np
import pytest

from matndp.hw.fp.compare import FPCompare
from matndp.hw.fp.opcodes import OP_BITS
from matndp.hw.fp.units import operations_of
from matndp.sim.flows.fp_vectors import run_fp_unit
from matndp.sim.golden.fp import SPECIAL_VALUES, mismatches, random_operands, softfloat_reference

from .cases import interleaved, results_at_full_rate


# One worker runs this file, so its simulator builds happen once and in turn.
pytestmark = pytest.mark.xdist_group("fp_compare")


CODES = {operation.name: operation.code for operation in operations_of(FPCompare)}


def golden(predicate, a, b):
    return softfloat_reference(predicate, a, b)


def run(code, a, b, simulator, seed=1):
    return run_fp_unit(FPCompare, code, a, b, np.zeros(len(a), dtype=np.uint32),
                       simulator=simulator, back_pressure="random", seed=seed)


def check(predicate, a, b, simulator):
    actual = run(CODES[predicate], a, b, simulator)
    problems = mismatches(golden(predicate, a, b), actual, a, b)
    assert not problems, f"{predicate}:\n" + "\n".join(problems)


# (a, b, eq, lt, le), worked out by hand.
KNOWN = [
    (0x00000000, 0x80000000, 1, 0, 1),   # +0 == -0
    (0x80000000, 0x00000000, 1, 0, 1),
    (0x3F800000, 0x40000000, 0, 1, 1),
    (0x40000000, 0x3F800000, 0, 0, 0),
    (0xC0000000, 0xBF800000, 0, 1, 1),   # -2 < -1
    (0x80000001, 0x00000000, 0, 1, 1),   # negative subnormal < +0
    (0x00000001, 0x80000000, 0, 0, 0),
    (0xFF800000, 0xFF7FFFFF, 0, 1, 1),
    (0x7F800000, 0x7F800000, 1, 0, 1),
    (0x7FC00000, 0x7FC00000, 0, 0, 0),   # NaN equals nothing, itself included
    (0x3F800000, 0x7FC00000, 0, 0, 0),
    (0xFF800001, 0x3F800000, 0, 0, 0),   # signalling NaN: quiet predicates, false
]


@pytest.mark.parametrize("predicate", list(CODES))
def test_known_results_match_softfloat_and_the_rtl(predicate):
    a, b, *expected = (np.array(column, dtype=np.uint32) for column in zip(*KNOWN))
    expected = dict(zip(("eq", "lt", "le"), expected))[predicate]
    assert golden(predicate, a, b).tolist() == expected.tolist()
    assert run(CODES[predicate], a, b, "amaranth").tolist() == expected.tolist()


def _special_pairs():
    a, b = np.meshgrid(SPECIAL_VALUES, SPECIAL_VALUES)
    return a.ravel().astype(np.uint32), b.ravel().astype(np.uint32)


@pytest.mark.parametrize("simulator", ["amaranth", "verilator", "icarus"])
@pytest.mark.parametrize("predicate", list(CODES))
def test_all_pairs_of_special_values(predicate, simulator):
    check(predicate, *_special_pairs(), simulator)


@pytest.mark.parametrize("simulator, count", [("icarus", 5_000), ("verilator", 20_000)])
@pytest.mark.parametrize("predicate", list(CODES))
def test_random_close_operands(predicate, simulator, count):
    a, b = random_operands("min", count, seed=41)
    # A share of equal operands, which random pairs would almost never give.
    b = np.where(np.arange(count) % 8 == 0, a, b).astype(np.uint32)
    check(predicate, a, b, simulator)


@pytest.mark.slow
@pytest.mark.parametrize("predicate", list(CODES))
def test_a_million_random_vectors_verilator(predicate):
    a, b = random_operands("min", 1_000_000, seed=2028)
    check(predicate, a, b, "verilator")


def test_unassigned_codes_are_false():
    a, b = _special_pairs()
    assigned = {code.value for code in CODES.values()}
    unassigned = [code for code in range(1 << OP_BITS) if code not in assigned]
    assert unassigned
    for code in unassigned:
        assert not run(code, a[:200], b[:200], "amaranth").any()


def test_one_result_per_cycle_after_latency():
    """With operands every cycle and the result always taken, the unit never stalls and
    each result appears LATENCY cycles after its record; the predicates interleave."""
    a, b = random_operands("min", 18, seed=6)
    b[::3] = a[::3]
    codes, expected = interleaved(FPCompare, {name: golden(name, a, b) for name in CODES})
    assert results_at_full_rate(FPCompare(), a=a, b=b, op=codes) == expected
