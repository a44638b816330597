"""The golden references agree with each other (MPFR via gmpy2 or float64 comparisons,
Berkeley SoftFloat, numpy float32 where it is the same IEEE operation), cover every
operation of the op table, and agree with values worked out by hand."""

import gmpy2
import numpy as np
import pytest

from matndp.hw.fp.units import FP_OPERATIONS
from matndp.sim.golden.fp import (CANONICAL_NAN, bits_to_float, directed_operands,
                                  random_operands, reference, softfloat_reference,
                                  subnormal_rounding_products)
from tests.sim.golden.hand_worked import HAND_WORKED


@pytest.mark.parametrize("op", ["add", "sub", "mul", "fma", "div", "sqrt",
                                "f32_to_bf16", "bf16_to_f32", "eq", "lt", "le"])
def test_mpfr_and_softfloat_agree(op):
    for operands in (directed_operands(op), random_operands(op, 5_000, seed=12)):
        np.testing.assert_array_equal(reference(op, *operands), softfloat_reference(op, *operands))


def test_subnormal_rounding_products_sit_where_documented():
    """Each product exceeds or falls short of a subnormal half-way point, or sits on it,
    by less than the bits the shift into the subnormal range pushes out."""
    pairs = subnormal_rounding_products()
    assert len(pairs) >= 40
    for a, b in pairs:
        exact = gmpy2.mpfr(bits_to_float([a])[0]) * gmpy2.mpfr(bits_to_float([b])[0])
        steps = exact / gmpy2.mpfr(2) ** -149           # in smallest subnormals
        nearest_half = gmpy2.floor(steps) + gmpy2.mpfr(0.5)
        # Less than 2^s in the product, whose rounding step is 2^(s + 24).
        assert abs(steps - nearest_half) < gmpy2.mpfr(2) ** -24
        assert steps < 2 ** 23


@pytest.mark.parametrize("op, function", [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
])
def test_mpfr_and_numpy_float32_agree(op, function):
    a, b = random_operands(op, 5_000, seed=13)
    with np.errstate(all="ignore"):
        bits = function(a.view(np.float32), b.view(np.float32)).view(np.uint32).copy()
    bits[np.isnan(bits.view(np.float32))] = CANONICAL_NAN
    np.testing.assert_array_equal(reference(op, a, b), bits)


@pytest.mark.parametrize("op", list(FP_OPERATIONS))
def test_every_operation_has_operand_sets_and_a_reference(op):
    arity = FP_OPERATIONS[op].arity
    for operands in (directed_operands(op), random_operands(op, 100, seed=14)):
        assert len(operands) == arity
        assert len({len(column) for column in operands}) == 1
        assert all(column.dtype == np.uint32 for column in operands)
        assert reference(op, *operands).shape == operands[0].shape


@pytest.mark.parametrize("op, operands, expected", HAND_WORKED)
def test_hand_worked_values(op, operands, expected):
    columns = [np.array([x], dtype=np.uint32) for x in operands]
    assert int(reference(op, *columns)[0]) == expected
