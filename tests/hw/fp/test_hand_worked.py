"""The RTL on the FP32 results worked out by hand (tests/sim/golden/hand_worked.py), in
Amaranth's simulator with random back-pressure: expectations that owe nothing to the golden
reference. Among them, products that round in the subnormal range with the excess over a
half-way point only in the bits the shift into that range pushes out
(``0x1A7FFFFF * 0x19800001`` rounds to ``0x00000001``, not to zero), for multiply and FMA."""

import numpy as np
import pytest

from matndp.sim.flows.fp_vectors import run_fp_vectors
from tests.sim.golden.hand_worked import HAND_WORKED


OPS = sorted({op for op, _, _ in HAND_WORKED})


@pytest.mark.parametrize("op", OPS)
def test_hand_worked_values(op):
    cases = [(operands, expected) for name, operands, expected in HAND_WORKED if name == op]
    columns = [np.array(column, dtype=np.uint32) for column in zip(*(operands for operands, _ in cases))]
    results = run_fp_vectors(op, *columns, simulator="amaranth", back_pressure="random", seed=9)
    got = [int(value) for value in results]
    wrong = [f"{op}{tuple(hex(x) for x in operands)}: {value:#010x}, expected {expected:#010x}"
             for (operands, expected), value in zip(cases, got) if value != expected]
    assert len(got) == len(cases) and not wrong, "\n".join(wrong)


def test_the_subnormal_sticky_cases_are_among_them():
    assert ("mul", (0x1A7FFFFF, 0x19800001), 0x00000001) in HAND_WORKED
    assert ("fma", (0x1A7FFFFF, 0x19800001, 0x00000000), 0x00000001) in HAND_WORKED
