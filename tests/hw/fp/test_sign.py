"""FPSign: abs and neg, against numpy's float32 abs/negative with NaNs canonicalized (the
unit's documented choice), in Amaranth's simulator, Verilator and Icarus under random
back-pressure; and one result per cycle at the documented latency."""

import numpy as np
import pytest

from matndp.hw.fp.sign import FPSign
from matndp.hw.fp.units import operations_of
from matndp.sim.flows.fp_vectors import run_fp_unit
from matndp.sim.golden.fp import SPECIAL_VALUES, mismatches, random_floats, reference

from .cases import interleaved, results_at_full_rate


# One worker runs this file, so its simulator builds happen once and in turn.
pytestmark = pytest.mark.xdist_group("fp_sign")


CODES = {operation.name: operation.code for operation in operations_of(FPSign)}


def golden(operation, a):
    return reference(operation, a)


def run(code, a, simulator, seed=1):
    zeros = np.zeros(len(a), dtype=np.uint32)
    return run_fp_unit(FPSign, code, a, zeros, zeros, simulator=simulator,
                       back_pressure="random", seed=seed)


def check(operation, a, simulator):
    problems = mismatches(golden(operation, a), run(CODES[operation], a, simulator), a)
    assert not problems, f"{operation}:\n" + "\n".join(problems)


# (a, abs, neg), worked out by hand.
KNOWN = [
    (0x00000000, 0x00000000, 0x80000000),
    (0x80000000, 0x00000000, 0x00000000),
    (0xBF800000, 0x3F800000, 0x3F800000),
    (0x00000001, 0x00000001, 0x80000001),
    (0xFF800000, 0x7F800000, 0x7F800000),
    (0x7F7FFFFF, 0x7F7FFFFF, 0xFF7FFFFF),
    (0xFFC00000, 0x7FC00000, 0x7FC00000),   # NaNs come out canonical
    (0x7FC00000, 0x7FC00000, 0x7FC00000),
    (0x7F800001, 0x7FC00000, 0x7FC00000),
]


@pytest.mark.parametrize("operation", list(CODES))
def test_known_results_match_the_reference_and_the_rtl(operation):
    a, absolute, negated = (np.array(column, dtype=np.uint32) for column in zip(*KNOWN))
    expected = absolute if operation == "abs" else negated
    assert golden(operation, a).tolist() == expected.tolist()
    assert run(CODES[operation], a, "amaranth").tolist() == expected.tolist()


@pytest.mark.parametrize("simulator, count", [
    ("amaranth", 1_000), ("icarus", 5_000), ("verilator", 20_000)])
@pytest.mark.parametrize("operation", list(CODES))
def test_special_and_random_values(operation, simulator, count):
    a = np.concatenate([SPECIAL_VALUES, random_floats(np.random.default_rng(61), count)])
    check(operation, a, simulator)


@pytest.mark.slow
@pytest.mark.parametrize("operation", list(CODES))
def test_a_million_random_vectors_verilator(operation):
    check(operation, random_floats(np.random.default_rng(2030), 1_000_000), "verilator")


def test_one_result_per_cycle_after_latency():
    """With operands every cycle and the result always taken, the unit never stalls and
    each result appears LATENCY cycles after its record; abs and neg interleave."""
    a = random_floats(np.random.default_rng(8), 16)
    codes, expected = interleaved(FPSign, {name: golden(name, a) for name in CODES})
    assert results_at_full_rate(FPSign(), a=a, op=codes) == expected
