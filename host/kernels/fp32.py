"""Binary32 and bfloat16 arithmetic on bit patterns, vectorized with numpy, exactly as the
engine's FP units compute it (``hw/fp/``).

Every function takes and returns ``uint32`` arrays of bit patterns (broadcasting as numpy
does). The rules of the units: round to nearest, ties to even; subnormals kept; every NaN an
arithmetic operation produces is the canonical quiet NaN ``0x7FC00000`` (``abs`` and ``neg``
of a NaN included); comparisons are IEEE 754's quiet predicates; minimum and maximum are
IEEE 754-2019's (NaN-propagating, −0 < +0).

numpy's float32 add, subtract, multiply, divide and square root are IEEE operations
(correctly rounded, subnormals kept), so they serve directly. numpy has no fused
multiply-add: :func:`fma` forms the product exactly in float64, adds in float64 rounded to
odd (an error-free sum tells which way the float64 rounding went), and rounds that to
binary32 once; rounding to odd at 53 bits followed by rounding to nearest at 24 bits equals
a single rounding of the exact value, because 53 ≥ 24 + 2.
"""

import numpy as np


__all__ = ["CANONICAL_NAN", "canonical", "is_nan", "add", "sub", "mul", "fma", "div", "sqrt",
           "rsqrt", "minimum", "maximum", "equal", "less", "less_equal", "absolute",
           "negative", "to_bf16", "from_bf16", "pairwise_tree"]


CANONICAL_NAN = np.uint32(0x7FC00000)
_SIGN = np.uint32(0x80000000)
_MAGNITUDE = np.uint32(0x7FFFFFFF)
_INFINITY = np.uint32(0x7F800000)


def _bits(x):
    return np.asarray(x, dtype=np.uint32)


def _floats(x):
    return _bits(x).view(np.float32)


def is_nan(bits):
    return (_bits(bits) & _MAGNITUDE) > _INFINITY


def canonical(bits):
    """``bits`` with every NaN replaced by the canonical NaN."""
    bits = _bits(bits)
    return np.where(is_nan(bits), CANONICAL_NAN, bits).astype(np.uint32)


def _float_op(function, *operands):
    # Signaling NaNs, invalid operations and overflows raise no flags in the engine.
    with np.errstate(all="ignore"):
        result = function(*(_floats(x) for x in operands))
    return canonical(np.asarray(result, dtype=np.float32).view(np.uint32))


def add(a, b):
    return _float_op(np.add, a, b)


def sub(a, b):
    return _float_op(np.subtract, a, b)


def mul(a, b):
    return _float_op(np.multiply, a, b)


def div(a, b):
    return _float_op(np.divide, a, b)


def sqrt(a):
    return _float_op(np.sqrt, a)


def rsqrt(a):
    """1 ÷ √a with both operations rounded, as the divide unit computes it."""
    return div(np.uint32(0x3F800000), sqrt(a))


def fma(a, b, c):
    """a × b + c with one rounding."""
    with np.errstate(all="ignore"):
        product = _floats(a).astype(np.float64) * _floats(b).astype(np.float64)  # exact
        addend = _floats(c).astype(np.float64)
        total = product + addend
        # TwoSum: total + error == product + addend exactly (no overflow is possible:
        # binary32 products stay below 2^256).
        virtual = total - product
        error = (product - (total - virtual)) + (addend - virtual)
        total_bits = np.asarray(total).view(np.uint64)
        inexact = (error != 0) & np.isfinite(total)
        even = (total_bits & np.uint64(1)) == 0
        # Round to odd: an inexact even result moves one ulp toward the exact value,
        # which for sign-magnitude encodings is +1 when the error has the result's sign.
        away = (error > 0) == (total > 0)
        step = np.where(inexact & even, np.where(away, 1, -1), 0).astype(np.int64)
        odd = (total_bits.astype(np.int64) + step).view(np.float64)
        result = odd.astype(np.float32).view(np.uint32)
    return canonical(result)


def _round_to_odd_sum(product, addend):
    """product + addend (float64 arrays) rounded to odd at float64 precision."""
    total = product + addend
    virtual = total - product
    error = (product - (total - virtual)) + (addend - virtual)
    bits = total.view(np.uint64)
    fix = (error != 0) & np.isfinite(total) & ((bits & np.uint64(1)) == 0)
    if fix.any():
        step = np.where((error > 0) == (total > 0), 1, -1)
        total = np.where(fix, (bits.astype(np.int64) + step).view(np.float64), total)
    return total


def fma_accumulate(state, index, b, c):
    """``state[index[k]] = fma(b[k], c[k], state[index[k]])`` for k = 0, 1, … in order
    (a chain of fused multiply-adds with one rounding each), on bit patterns: ``state``
    is (S, lanes), ``b`` and ``c`` are (K, lanes). One numpy step per round of distinct
    rows, so that a long chain into few rows stays fast."""
    index = np.asarray(index)
    count = len(index)
    order = np.argsort(index, kind="stable")
    starts = np.r_[0, np.flatnonzero(index[order][1:] != index[order][:-1]) + 1]
    rank = np.empty(count, dtype=np.int64)
    rank[order] = np.arange(count) - np.repeat(starts, np.diff(np.r_[starts, count]))
    by_round = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[by_round], np.arange(int(rank.max()) + 2 if count else 1))
    with np.errstate(all="ignore"):
        products = (_floats(b).astype(np.float64) * _floats(c).astype(np.float64))[by_round]
        rows = index[by_round]
        values = _floats(state).astype(np.float64)
        for start, end in zip(bounds[:-1], bounds[1:]):
            chosen = rows[start:end]
            total = _round_to_odd_sum(products[start:end], values[chosen])
            values[chosen] = total.astype(np.float32).astype(np.float64)
        result = values.astype(np.float32).view(np.uint32)
    return canonical(result)


def _order_key(bits):
    """An unsigned key in numeric order for non-NaN patterns (−0 below +0)."""
    bits = _bits(bits)
    return np.where(bits & _SIGN, ~bits, bits | _SIGN).astype(np.uint32)


def _from_order_key(key):
    return np.where(key & _SIGN, key ^ _SIGN, ~key).astype(np.uint32)


def maximum_accumulate(state, index, values):
    """``state[index[k]] = maximum(state[index[k]], values[k])`` for every k; maximum is
    a selection (NaN propagating, −0 < +0), so the order does not matter and one
    unbuffered ``ufunc.at`` over order keys does it (NaN keyed above everything)."""
    def keys(bits):
        return np.where(is_nan(bits), np.uint32(0xFFFFFFFF), _order_key(bits)).astype(np.uint32)
    accumulated = keys(state)
    np.maximum.at(accumulated, np.asarray(index), keys(values))
    return canonical(np.where(accumulated == 0xFFFFFFFF, CANONICAL_NAN, _from_order_key(accumulated)))


def minimum(a, b):
    a, b = np.broadcast_arrays(_bits(a), _bits(b))
    result = np.where(_order_key(a) <= _order_key(b), a, b)
    return np.where(is_nan(a) | is_nan(b), CANONICAL_NAN, result).astype(np.uint32)


def maximum(a, b):
    a, b = np.broadcast_arrays(_bits(a), _bits(b))
    result = np.where(_order_key(a) >= _order_key(b), a, b)
    return np.where(is_nan(a) | is_nan(b), CANONICAL_NAN, result).astype(np.uint32)


def _compare(function, a, b):
    with np.errstate(all="ignore"):
        return function(_floats(a), _floats(b)).astype(np.uint32)


def equal(a, b):
    return _compare(np.equal, a, b)


def less(a, b):
    return _compare(np.less, a, b)


def less_equal(a, b):
    return _compare(np.less_equal, a, b)


def absolute(a):
    return canonical(_bits(a) & _MAGNITUDE)


def negative(a):
    return canonical(_bits(a) ^ _SIGN)


def to_bf16(a):
    """binary32 → bfloat16 (in the low 16 bits), to nearest, ties to even; NaN → 0x7FC0.
    Both formats share the exponent field, so rounding is an integer addition that carries
    into the exponent (subnormals and overflow to infinity included)."""
    a = _bits(a)
    rounded = (a.astype(np.uint64) + 0x7FFF + ((a >> np.uint32(16)) & np.uint32(1))) >> 16
    return np.where(is_nan(a), np.uint32(0x7FC0), rounded).astype(np.uint32)


def from_bf16(a):
    """bfloat16 (the low 16 bits of ``a``) → binary32, exact; NaN → canonical."""
    return canonical((_bits(a) & np.uint32(0xFFFF)) << np.uint32(16))


def pairwise_tree(function, lanes):
    """Reduce the last axis of ``lanes`` (a power-of-two length) with ``function`` in the
    engine's order: neighbours (0, 1), (2, 3), … first, then those results pairwise."""
    lanes = _bits(lanes)
    while lanes.shape[-1] > 1:
        lanes = function(lanes[..., 0::2], lanes[..., 1::2])
    return lanes[..., 0]
