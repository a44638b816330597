"""The simulator's FP32 arithmetic against MPFR (gmpy2) and Berkeley SoftFloat, on the
FP units' directed edge cases and biased random operands."""

import gmpy2
import numpy as np
import pytest

from matndp.host.kernels import fp32
from matndp.sim.golden.fp import (CANONICAL_NAN, SPECIAL_VALUES, bits_to_float,
                                  directed_operands, float_to_bits, mismatches,
                                  random_operands, reference, softfloat_reference)


OPERATIONS = {
    "add": fp32.add, "sub": fp32.sub, "mul": fp32.mul, "fma": fp32.fma, "div": fp32.div,
    "sqrt": fp32.sqrt, "min": fp32.minimum, "max": fp32.maximum,
    "f32_to_bf16": fp32.to_bf16, "bf16_to_f32": fp32.from_bf16,
}


def _operands(op):
    return [directed_operands(op), random_operands(op, 40000, seed=hash(op) % 1000)]


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_against_mpfr(op):
    for operands in _operands(op):
        expected = reference(op, *operands)
        actual = OPERATIONS[op](*operands)
        assert not mismatches(expected, actual, *operands)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "fma", "div", "sqrt"])
def test_against_softfloat(op):
    operands = random_operands(op, 4000, seed=7)
    expected = softfloat_reference(op, *operands)
    assert not mismatches(expected, OPERATIONS[op](*operands), *operands)


def test_fma_rounds_once_where_two_roundings_differ():
    # (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly; a rounded product would give 0.
    a = np.uint32(0x3F800001)
    assert fp32.fma(a, a, np.uint32(0xBF800002)) == np.uint32(0x28800000)


def test_rsqrt_is_sqrt_then_divide_each_rounded():
    values = np.concatenate([SPECIAL_VALUES, random_operands("sqrt", 20000, seed=3)[0]])
    with gmpy2.context(gmpy2.ieee(32)):
        roots = [gmpy2.sqrt(gmpy2.mpfr(x)) for x in bits_to_float(values)]
        quotients = [float(gmpy2.div(1, root)) for root in roots]
    expected = float_to_bits(quotients)
    assert not mismatches(expected, fp32.rsqrt(values), values)


def test_sign_operations_canonicalize_nans_only():
    nan = ((SPECIAL_VALUES & 0x7F800000) == 0x7F800000) & ((SPECIAL_VALUES & 0x7FFFFF) != 0)
    absolute, negative = fp32.absolute(SPECIAL_VALUES), fp32.negative(SPECIAL_VALUES)
    assert (absolute[nan] == CANONICAL_NAN).all() and (negative[nan] == CANONICAL_NAN).all()
    assert (absolute[~nan] == SPECIAL_VALUES[~nan] & 0x7FFFFFFF).all()
    assert (negative[~nan] == SPECIAL_VALUES[~nan] ^ 0x80000000).all()


def test_comparisons_are_quiet_predicates():
    a, b = directed_operands("min")
    x, y = bits_to_float(a), bits_to_float(b)
    assert (fp32.equal(a, b) == (x == y)).all()
    assert (fp32.less(a, b) == (x < y)).all()
    assert (fp32.less_equal(a, b) == (x <= y)).all()
    assert fp32.equal(np.uint32(0), np.uint32(0x80000000)) == 1


def test_minimum_orders_zeros():
    zero, negative_zero = np.uint32(0), np.uint32(0x80000000)
    assert fp32.minimum(zero, negative_zero) == negative_zero
    assert fp32.maximum(negative_zero, zero) == zero


def test_pairwise_tree_order():
    lanes = np.array([[1, 2, 3, 4, 5, 6, 7, 8]], dtype=np.uint32)
    assert fp32.pairwise_tree(lambda a, b: a * 10 + b, lanes)[0] == ((12 * 10 + 34) * 10 + (56 * 10 + 78))


def test_ufunc_at_adds_repeated_indices_in_order():
    """What the simulator's samoadd relies on: np.add.at on float32 applies repeated
    indices one after the other, in index order, each sum rounded to float32."""
    rng = np.random.default_rng(11)
    for _ in range(50):
        count, slots = int(rng.integers(1, 3000)), int(rng.integers(1, 6))
        index = rng.integers(0, slots, count)
        values = (rng.standard_normal(count) * 10.0 ** rng.integers(-8, 9, count)).astype(np.float32)
        start = rng.standard_normal(slots).astype(np.float32)
        vectorized, looped = start.copy(), start.copy()
        np.add.at(vectorized, index, values)
        for i, value in zip(index, values):
            looped[i] = np.float32(looped[i] + value)
        assert (vectorized.view(np.uint32) == looped.view(np.uint32)).all()


@pytest.mark.parametrize("seed", range(6))
def test_accumulating_atomics_equal_a_loop(seed):
    rng = np.random.default_rng(seed)
    count, rows = int(rng.integers(1, 400)), int(rng.integers(1, 5))
    b, c, _ = (x.reshape(count, 8) for x in random_operands("fma", count * 8, seed))
    state = random_operands("add", rows * 8, seed + 50)[0].reshape(rows, 8)
    index = rng.integers(0, rows, count)
    fused, largest = state.copy(), state.copy()
    for k in range(count):
        fused[index[k]] = reference("fma", b[k], c[k], fused[index[k]])
        largest[index[k]] = reference("max", largest[index[k]], c[k])
    assert (fp32.fma_accumulate(state, index, b, c) == fused).all()
    assert (fp32.maximum_accumulate(state, index, c) == largest).all()


@pytest.mark.parametrize("source", ["directed", "random"])
def test_one_accumulating_step_is_one_fused_multiply_add(source):
    """The FMA table's own triples (addends where rounding twice would go wrong), one row
    each: state = c, then state = fma(a, b, state)."""
    a, b, c = directed_operands("fma") if source == "directed" else random_operands("fma", 40000, 7)
    rows = len(a) // 8
    a, b, c = (np.asarray(x[:rows * 8], dtype=np.uint32).reshape(rows, 8) for x in (a, b, c))
    expected = reference("fma", a.ravel(), b.ravel(), c.ravel()).reshape(rows, 8)
    assert (fp32.fma_accumulate(c, np.arange(rows), a, b) == expected).all()


def test_plain_python_integers_are_bit_patterns():
    # 1.5 × 2 + 1 = 4, 1.5 + 2 = 3.5, −(−0.5) = 0.5: the operands as the ints a kernel's
    # immediates hold.
    assert int(fp32.fma(0x3FC00000, 0x40000000, 0x3F800000)) == 0x40800000
    assert fp32.add([0x3FC00000], [0x40000000]).tolist() == [0x40600000]
    assert int(fp32.negative(0xBF000000)) == 0x3F000000
