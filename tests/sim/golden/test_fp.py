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


# Worked out by hand from the binary32 encoding.
@pytest.mark.parametrize("op, operands, expected", [
    ("add", (0x3F800000, 0x33800000), 0x3F800000),   # 1 + 2^-24: tie, even
    ("add", (0x3F800001, 0x33800000), 0x3F800002),   # tie from odd: up
    ("add", (0x7F7FFFFF, 0x73000000), 0x7F800000),   # max + half ulp: tie to inf
    ("sub", (0x3F800000, 0x3F800000), 0x00000000),   # x - x = +0
    ("add", (0x80000000, 0x80000000), 0x80000000),   # -0 + -0 = -0
    ("add", (0x00800000, 0x80000001), 0x007FFFFF),   # min normal - min subnormal
    ("mul", (0x1A000000, 0x1A000000), 0x00000000),   # 2^-150: tie, +0
    ("mul", (0x1A000001, 0x1A000000), 0x00000001),   # just above: min subnormal
    ("mul", (0x00000003, 0x3F000000), 0x00000002),   # 1.5 * 2^-149: tie to even
    # (2 - 2^-23) 2^-75 * (1 + 2^-23) 2^-76 = 2^-150 (1 + 2^-24 - 2^-47): above the tie
    ("mul", (0x1A7FFFFF, 0x19800001), 0x00000001),
    ("fma", (0x1A7FFFFF, 0x19800001, 0x00000000), 0x00000001),
    ("fma", (0x1A7FFFFF, 0x19800001, 0x80000000), 0x00000001),
    ("fma", (0x1A7FFFFF, 0x19800001, 0x00000002), 0x00000003),   # 2 + 1/2 + a hair: 3
    ("mul", (0x7F800000, 0x00000000), CANONICAL_NAN),
    ("fma", (0x3F800001, 0x3F800001, 0xBF800002), 0x28800000),   # exact 2^-46
    ("fma", (0x40400000, 0x40A00000, 0xC1700000), 0x00000000),   # 3*5 - 15 = +0
    ("fma", (0x80000000, 0x3F800000, 0x80000000), 0x80000000),   # -0 + -0
    ("fma", (0x7F7FFFFF, 0x40000000, 0xFF7FFFFF), 0x7F7FFFFF),   # no intermediate overflow
])
def test_hand_worked_values(op, operands, expected):
    columns = [np.array([x], dtype=np.uint32) for x in operands]
    assert int(reference(op, *columns)[0]) == expected
