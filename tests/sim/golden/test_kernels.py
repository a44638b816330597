"""The library's exponential, tanh and GELU against MPFR: the error bounds docs/kernels.md
states, measured on seeded samples of the FP32 ranges the kernels use (exact references at
200 bits); and the golden primitives against the FP32 reference of sim/golden/fp.py."""

import math

import gmpy2
import numpy as np
import pytest

from matndp.sim.golden import kernels as golden
from matndp.sim.golden.fp import random_operands, reference


_EXACT = gmpy2.context(precision=200, emin=-100000, emax=100000)


def ulp_errors(computed, inputs, exact):
    """|computed − exact(input)| in units of the binary32 ulp of the exact value (the
    subnormal spacing 2^-149 below the normal range)."""
    errors = []
    with gmpy2.context(_EXACT):
        for y, x in zip(np.asarray(computed, np.float64).tolist(), np.asarray(inputs, np.float64).tolist()):
            value = exact(gmpy2.mpfr(x))
            exponent = int(gmpy2.floor(gmpy2.log2(abs(value)))) if value != 0 else -1000
            errors.append(float(abs(gmpy2.mpfr(y) - value) / gmpy2.exp2(max(exponent - 23, -149))))
    return np.array(errors)


def _magnitudes(rng, count, low_exponent):
    """Values spread over binades 2^0 … 2^low_exponent."""
    return rng.uniform(0.5, 1.0, count) * 2.0 ** -rng.integers(0, -low_exponent, count)


# Bounds stated in docs/kernels.md ("Exponential, tanh, GELU"); the maxima measured on
# 4 M samples were 1.98 (exp) and 2.49 (tanh) ulp.
EXP_BOUND = 2.0
TANH_BOUND = 2.5


def test_exp_error_bound_on_its_domain():
    rng = np.random.default_rng(0)
    a = -np.concatenate([rng.uniform(0, 120, 15000), _magnitudes(rng, 5000, -60)]).astype(np.float32)
    a = np.concatenate([a, np.float32([0.0, -0.0, -0.3465736, -0.3465737, -87.33654, -87.33655,
                                       -103.2789, -103.97208, -104.0, -119.99])])
    errors = ulp_errors(golden.exp_nonpositive(a), a, gmpy2.exp)
    assert errors.max() <= EXP_BOUND, f"exp: {errors.max():.3f} ulp at a = {a[errors.argmax()]!r}"


def test_exp_special_values():
    a = np.float32([-np.inf, np.nan, -120.0, -200.0, -1e30, 0.0, -0.0])
    e = golden.exp_nonpositive(a)
    assert e[0] == 0 and np.isnan(e[1]) and e[2] == 0 and e[3] == 0 and e[4] == 0
    assert e[5] == 1.0 and e[6] == 1.0
    assert e.view(np.uint32)[1] == 0x7FC00000


def test_tanh_error_bound_over_the_fp32_range():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-10, 10, 15000),
                        rng.choice([-1.0, 1.0], 5000) * _magnitudes(rng, 5000, -140)]).astype(np.float32)
    x = np.concatenate([x, np.float32([1e-45, -1e-45, 0.34657, 0.3466, 9.0, 9.01, 9.5, 20.0, 3e38])])
    errors = ulp_errors(golden.tanh(x), x, gmpy2.tanh)
    assert errors.max() <= TANH_BOUND, f"tanh: {errors.max():.3f} ulp at x = {x[errors.argmax()]!r}"


def test_tanh_signs_and_saturation():
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40])
    y = golden.tanh(x)
    assert list(y.view(np.uint32)[:2]) == [0, 0x80000000]
    assert y[2] == 1.0 and y[3] == -1.0 and np.isnan(y[4])
    assert y[5] == np.float32(1e-40) and y[6] == np.float32(-1e-40)


_BETA = float(np.float32(math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5))
_KAPPA = float(np.float32(0.044715))


def _gelu_exact(x):
    """GELU's tanh form with PyTorch's FP32 constants β and κ, exactly."""
    z = gmpy2.mpfr(_BETA) * (x + gmpy2.mpfr(_KAPPA) * x ** 3)
    return x * (1 + gmpy2.tanh(z)) / 2


# GELU is x·σ(2z): for x >= 0 its error is that of a few roundings; for x < 0 the FP32
# rounding of the exponent's argument 2z (as in any FP32 evaluation) is amplified by |2z|.
def gelu_bound(x):
    two_z = 2 * _BETA * np.abs(x.astype(np.float64) + _KAPPA * x.astype(np.float64) ** 3)
    return np.where(x >= 0, 2.0, 3.5 + 3.0 * two_z)


@pytest.mark.parametrize("interval", [(0.0, 12.0), (-1.0, 0.0), (-3.0, -1.0), (-11.0, -3.0)])
def test_gelu_error_bound(interval):
    rng = np.random.default_rng(2)
    x = rng.uniform(*interval, 4000).astype(np.float32)
    errors = ulp_errors(golden.gelu(x), x, _gelu_exact)
    excess = errors / gelu_bound(x)
    worst = excess.argmax()
    assert excess.max() <= 1.0, (f"gelu on {interval}: {errors[worst]:.2f} ulp at x = {x[worst]!r}, "
                                 f"bound {gelu_bound(x)[worst]:.2f}")


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "fma", "sqrt"])
def test_golden_primitives_are_ieee(op):
    """The goldens' FP32 operations against MPFR's binary32 (sim/golden/fp.py)."""
    operands = random_operands(op, 3000, np.random.default_rng(3)) if op != "sqrt" else \
        [np.abs(random_operands("sqrt", 3000, np.random.default_rng(3))[0])]
    function = getattr(golden, op)
    floats = [np.asarray(x, np.uint32).view(np.float32) for x in operands]
    got = np.asarray(function(*floats), np.float32).view(np.uint32)
    assert (got == reference(op, *operands)).all()


def test_golden_minimum_and_maximum_order_signed_zeros_and_propagate_nan():
    a = np.float32([0.0, -0.0, np.nan, 1.0])
    b = np.float32([-0.0, 0.0, 1.0, np.nan])
    assert list(golden.maximum(a, b).view(np.uint32)) == [0, 0, 0x7FC00000, 0x7FC00000]
    assert list(golden.minimum(a, b).view(np.uint32)) == [0x80000000, 0x80000000, 0x7FC00000, 0x7FC00000]


def test_bf16_conversions_round_to_nearest_even():
    x = np.array([0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF], np.uint32).view(np.float32)
    assert list(golden.to_bf16(x)) == [0x3F80, 0x3F82, 0x3F81, 0x7F80]
    assert golden.from_bf16(np.uint16([0x3F81])).view(np.uint32)[0] == 0x3F810000


def test_bf16_values_round_trip_through_the_conversions():
    x = np.array([1.0, -2.5, 3.140625, np.inf], dtype=np.float32)
    assert (golden.from_bf16(golden.to_bf16(x)) == x).all()
