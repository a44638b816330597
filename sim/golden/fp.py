"""Golden references for the FP32 units, independent of the RTL, and the operand sets
the tests draw from.

References (all on ``uint32`` bit-pattern arrays, every NaN result canonicalized to
0x7FC00000 because the units promise that and IEEE-754 leaves payloads open):

* :func:`reference` - GNU MPFR through gmpy2 in its binary32 context (24-bit precision,
  binary32 exponent range, subnormalize on, round to nearest even) for the arithmetic;
  direct definitions for minimum/maximum, for the comparisons (on the exact float64
  values), for abs/neg (numpy's float32 operations) and for select; MPFR with BF16's
  precision and range for FP32 -> BF16; exact widening for BF16 -> FP32.
* :func:`softfloat_reference` - Berkeley SoftFloat 3e through softfloatpy, a second,
  independent implementation to cross-check the first.

Operand sets: :data:`SPECIAL_VALUES`, :func:`directed_operands` (per-op tables of edge
cases) and :func:`random_operands` (random vectors biased toward exponent extremes,
close operands, subnormals, halfway cases and cancellation).
"""

import functools
import itertools
import struct

import gmpy2
import numpy as np
import softfloatpy


__all__ = ["CANONICAL_NAN", "SPECIAL_VALUES", "reference", "softfloat_reference",
           "canonicalize_nans", "directed_operands", "random_operands", "bits_to_float",
           "float_to_bits", "mismatches"]


CANONICAL_NAN = 0x7FC00000

# Edge values of binary32, both signs.
_POSITIVE_SPECIALS = [
    0x00000000,   # +0
    0x00000001,   # smallest subnormal 2^-149
    0x00000002,
    0x00400000,   # 2^-127, a subnormal with one bit
    0x007FFFFF,   # largest subnormal
    0x00800000,   # smallest normal 2^-126
    0x00800001,
    0x00FFFFFF,
    0x01000000,   # 2^-125
    0x33800000,   # 2^-24: half an ulp of 1.0
    0x34000000,   # 2^-23: one ulp of 1.0
    0x3F000000,   # 0.5
    0x3F7FFFFF,   # largest value below 1
    0x3F800000,   # 1.0
    0x3F800001,   # 1 + ulp
    0x3FC00000,   # 1.5
    0x40000000,   # 2.0
    0x4B800000,   # 2^24
    0x5F800000,   # 2^64
    0x7F000000,   # 2^127
    0x7F7FFFFF,   # largest finite
    0x7F800000,   # +inf
    0x7F800001,   # signaling NaN
    0x7FC00000,   # quiet NaN
    0x7FFFFFFF,   # quiet NaN, all payload bits
]
SPECIAL_VALUES = np.array(_POSITIVE_SPECIALS + [x | 0x80000000 for x in _POSITIVE_SPECIALS],
                          dtype=np.uint32)

# A smaller set for three-operand tables.
_FMA_SPECIALS = np.array([
    0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x3F800000, 0xBF800001,
    0x33800000, 0x3F7FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
    0x7F800001, 0xFFC00001, 0x1F800000, 0xA0000000,
], dtype=np.uint32)


def bits_to_float(bits):
    """float64 values (exact) of binary32 bit patterns."""
    with np.errstate(invalid="ignore"):   # signaling NaNs quieten, as intended here
        return np.asarray(bits, dtype=np.uint32).view(np.float32).astype(np.float64)


def float_to_bits(values):
    """binary32 bit patterns of values that are exactly representable (or inf/NaN)."""
    return canonicalize_nans(np.asarray(values, dtype=np.float64).astype(np.float32).view(np.uint32))


def canonicalize_nans(bits):
    bits = np.array(bits, dtype=np.uint32)
    nan = ((bits & 0x7F800000) == 0x7F800000) & ((bits & 0x007FFFFF) != 0)
    bits[nan] = CANONICAL_NAN
    return bits


def _mpfr_map(function, context, *columns):
    with gmpy2.context(context):
        mpfr = gmpy2.mpfr
        values = [float(function(*(mpfr(x) for x in row))) for row in zip(*columns)]
    return np.array(values, dtype=np.float64)


_BINARY32 = gmpy2.ieee(32)
# BF16: 8 significant bits, binary32's exponent range, smallest subnormal 2^-133
# (MPFR exponents count from 0.1b, so emin = -132 and emax = 128).
_BFLOAT16 = gmpy2.context(precision=8, emin=-132, emax=128, subnormalize=True,
                          round=gmpy2.RoundToNearest)


def _ieee_minimum(a, b, maximum):
    x, y = bits_to_float(a), bits_to_float(b)
    # IEEE 754-2019 minimum/maximum: NaN-propagating, and -0 orders below +0.
    negative_x = (a >> 31).astype(bool)
    negative_y = (b >> 31).astype(bool)
    if maximum:
        take_x = (x > y) | ((x == y) & ~negative_x)
    else:
        take_x = (x < y) | ((x == y) & negative_x)
    out = np.where(take_x, a, b).astype(np.uint32)
    out[np.isnan(x) | np.isnan(y)] = CANONICAL_NAN
    return out


_PREDICATES = {"eq": np.equal, "lt": np.less, "le": np.less_equal}


def _operation(op):
    binary32 = {
        "add": (gmpy2.add, 2), "sub": (gmpy2.sub, 2), "mul": (gmpy2.mul, 2),
        "fma": (gmpy2.fma, 3), "div": (gmpy2.div, 2), "sqrt": (gmpy2.sqrt, 1),
    }
    if op in binary32:
        function, arity = binary32[op]
        return arity, lambda *ops: float_to_bits(
            _mpfr_map(function, _BINARY32, *(bits_to_float(x) for x in ops)))
    if op in ("min", "max"):
        return 2, lambda a, b: _ieee_minimum(a, b, op == "max")
    if op in _PREDICATES:
        # Comparisons of the exact values are IEEE 754's quiet predicates: NaN is
        # unordered, +0 == -0.
        def holds(a, b):
            with np.errstate(invalid="ignore"):
                return _PREDICATES[op](bits_to_float(a), bits_to_float(b)).astype(np.uint32)
        return 2, holds
    if op in ("abs", "neg"):
        function = np.abs if op == "abs" else np.negative
        def sign(a):
            with np.errstate(invalid="ignore"):
                return canonicalize_nans(function(a.view(np.float32)).view(np.uint32))
        return 1, sign
    if op == "select":
        return 3, lambda a, b, c: np.where((c & 1).astype(bool), a, b).astype(np.uint32)
    if op == "f32_to_bf16":
        def to_bf16(a):
            rounded = float_to_bits(_mpfr_map(lambda x: +x, _BFLOAT16, bits_to_float(a)))
            out = rounded >> 16
            out[rounded == CANONICAL_NAN] = CANONICAL_NAN >> 16
            return out.astype(np.uint32)
        return 1, to_bf16
    if op == "bf16_to_f32":
        return 1, lambda a: canonicalize_nans(np.asarray(a, dtype=np.uint32) << 16)
    raise ValueError(f"unknown FP op {op!r}")


def reference(op, a, b=None, c=None):
    """Golden result bit patterns of ``op`` (as named by ``sim.flows.fp_vectors.FP_OPS``)."""
    arity, function = _operation(op)
    operands = [np.asarray(x, dtype=np.uint32) for x in (a, b, c)[:arity]]
    return function(*operands)


def softfloat_reference(op, a, b=None, c=None):
    """Golden result bit patterns from Berkeley SoftFloat (round to nearest even)."""
    functions = {
        "add": softfloatpy.f32_add, "sub": softfloatpy.f32_sub, "mul": softfloatpy.f32_mul,
        "fma": softfloatpy.f32_mul_add, "div": softfloatpy.f32_div, "sqrt": softfloatpy.f32_sqrt,
        "f32_to_bf16": lambda x: x.to_bf16(),
        "bf16_to_f32": softfloatpy.bf16_to_f32,
        "eq": softfloatpy.f32_eq, "lt": softfloatpy.f32_lt_quiet,
        "le": softfloatpy.f32_le_quiet,
    }
    if op not in functions:
        raise ValueError(f"no SoftFloat reference for FP op {op!r}")
    softfloatpy.set_rounding_mode(softfloatpy.RoundingMode.NEAR_EVEN)
    function = functions[op]
    if op == "bf16_to_f32":
        wrap = lambda bits: softfloatpy.BFloat16.from_bytes(struct.pack(">H", bits))
    else:
        wrap = lambda bits: softfloatpy.Float32.from_bytes(struct.pack(">I", bits))
    columns = [np.asarray(x, dtype=np.uint32).tolist() for x in (a, b, c) if x is not None]
    if op in _PREDICATES:
        return np.array([int(function(*(wrap(x) for x in row))) for row in zip(*columns)],
                        dtype=np.uint32)
    out = np.array([int.from_bytes(function(*(wrap(x) for x in row)).to_bytes(), "big")
                    for row in zip(*columns)], dtype=np.uint32)
    if op == "f32_to_bf16":
        nan = ((out & 0x7F80) == 0x7F80) & ((out & 0x7F) != 0)
        out[nan] = CANONICAL_NAN >> 16
        return out
    return canonicalize_nans(out)


def mismatches(expected, actual, *operands, limit=8):
    """A readable list of the first differing vectors (empty when all agree)."""
    bad = np.flatnonzero(np.asarray(expected) != np.asarray(actual))
    lines = []
    for index in bad[:limit]:
        shown = " ".join(f"{int(x[index]):#010x}" for x in operands)
        lines.append(f"[{index}] {shown} -> {int(actual[index]):#010x}, "
                     f"expected {int(expected[index]):#010x}")
    if len(bad) > limit:
        lines.append(f"... {len(bad) - limit} more")
    return lines


# Directed tables -----------------------------------------------------------------------

def _pairs(values):
    a, b = zip(*itertools.product(values.tolist(), repeat=2))
    return [np.array(a, dtype=np.uint32), np.array(b, dtype=np.uint32)]


def _columns(rows, arity):
    return [np.array([row[i] for row in rows], dtype=np.uint32) for i in range(arity)]


# (a, b) pairs whose sum or difference sits on a rounding or range boundary.
_ADDSUB_CASES = [
    (0x3F800000, 0x33800000),   # 1 + 2^-24: exact tie, stays at even 1.0
    (0x3F800001, 0x33800000),   # tie from an odd significand: rounds up
    (0x3F800000, 0x33800001),   # just above the tie: rounds up
    (0x3F800000, 0xB3800000),   # 1 - 2^-24: exact, one binade down
    (0x3F800000, 0xB3000000),   # 1 - 2^-25: tie below 1
    (0x3F7FFFFF, 0x33000000),   # carry out of rounding into the next binade
    (0x3F7FFFFF, 0x33800000),
    (0x7F7FFFFF, 0x73000000),   # largest finite + half an ulp: tie, overflows to inf
    (0x7F7FFFFF, 0x72FFFFFF),   # just below the tie: stays finite
    (0x7F7FFFFF, 0x7F7FFFFF),   # overflow
    (0xFF7FFFFF, 0xFF7FFFFF),
    (0x00800000, 0x80000001),   # smallest normal - smallest subnormal: largest subnormal
    (0x007FFFFF, 0x00000001),   # largest subnormal + smallest: smallest normal
    (0x007FFFFF, 0x007FFFFF),   # subnormal sum that is normal
    (0x00000001, 0x80000001),   # exact zero: +0
    (0x3F800000, 0xBF800000),   # x - x = +0
    (0x80000000, 0x80000000),   # -0 + -0 = -0
    (0x80000000, 0x00000000),   # -0 + +0 = +0
    (0x3F800001, 0xBF800000),   # cancellation to one ulp
    (0x4B800001, 0xCB800000),
    (0x00800001, 0x80800000),   # cancellation into the subnormal range
    (0x4B7FFFFF, 0x3F000000),   # 2^24 - 1 + 0.5: tie at the integer boundary
    (0x4B800000, 0x3F800000),   # 2^24 + 1: tie, even
    (0x4B800001, 0x3F800000),   # tie, odd: up
    (0x7F800000, 0xFF800000),   # inf - inf: NaN
    (0x7F800000, 0x7F800000),
    (0x7F800000, 0x7F7FFFFF),
]

_MUL_CASES = [
    (0x3F800001, 0x3F800001),   # (1 + 2^-23)^2: rounds to 1 + 2^-22
    (0x3FFFFFFF, 0x3FFFFFFF),   # carry out of rounding
    (0x3F7FFFFF, 0x3F800001),   # 1 - 2^-46: rounds to 1 ... below
    (0x1F800000, 0x1F800000),   # 2^-64 * 2^-64 = 2^-128: exact subnormal
    (0x1A000000, 0x1A000000),   # 2^-75 * 2^-75 = 2^-150: tie, rounds to +0
    (0x1A000001, 0x1A000000),   # just above half the smallest subnormal: rounds up
    (0x19FFFFFF, 0x1A000000),   # just below: +0
    (0x9A000001, 0x1A000000),   # negative: -min subnormal
    (0x9A000000, 0x1A000000),   # -0 after rounding
    (0x1A7FFFFF, 0x19800001),   # 2^-150 (1 + 2^-24 - 2^-47): above the tie only in bits
                                # that shift out: the smallest subnormal
    (0x00800000, 0x3F000000),   # smallest normal / 2: exact subnormal
    (0x00800001, 0x3F000000),   # inexact subnormal: tie to even
    (0x00800003, 0x3F000000),   # tie to even, up
    (0x00FFFFFF, 0x3F000000),   # rounds up to the smallest normal... via subnormal carry
    (0x007FFFFF, 0x40000000),   # subnormal * 2: normal
    (0x00000001, 0x4B000000),   # 2^-149 * 2^23: normal from the smallest subnormal
    (0x00000001, 0x3F800000),
    (0x00000001, 0x3F000000),   # 2^-150: tie, +0
    (0x00000001, 0x3F400000),   # 0.75 * 2^-149: rounds up
    (0x00000003, 0x3F000000),   # 1.5 * 2^-149: tie, to even 2^-148
    (0x5F800000, 0x5F800000),   # 2^64 * 2^64: overflow to inf
    (0x7F7FFFFF, 0x3F800001),   # largest finite * (1 + ulp): overflow
    (0x7F7FFFFF, 0x3F7FFFFF),
    (0x7F000000, 0x40000000),   # 2^127 * 2: overflow
    (0x7F800000, 0x00000000),   # inf * 0: NaN
    (0x00000000, 0xFF800000),
    (0x7F800000, 0x00000001),
]

_FMA_CASES = [
    (0x3F800001, 0x3F800001, 0xBF800002),   # (1+u)^2 - (1+2u) = u^2: no double rounding
    (0x3F800001, 0x3F7FFFFF, 0xBF800000),   # (1+u)(1-u/2) - 1: tiny residue
    (0x40400000, 0x40A00000, 0xC1700000),   # 3 * 5 - 15 = +0
    (0xC0400000, 0x40A00000, 0x41700000),   # -15 + 15 = +0
    (0x80000000, 0x3F800000, 0x80000000),   # -0 * 1 + -0 = -0
    (0x00000000, 0x3F800000, 0x80000000),   # +0 + -0 = +0
    (0x80000000, 0x80000000, 0x80000000),   # +0 + -0 = +0
    (0x00000000, 0x7F7FFFFF, 0x00000001),   # 0 * x + smallest subnormal: exact
    (0x1A000000, 0x1A000000, 0x00000000),   # 2^-150 + 0: tie, +0
    (0x1A000001, 0x1A000000, 0x80000000),   # rounds up to the smallest subnormal
    (0x1F800000, 0x1F800000, 0x80800000),   # 2^-128 - 2^-126: subnormal result
    (0x20000000, 0x1F800000, 0x80800000),   # 2^-127 - 2^-126 = -2^-127
    (0x3F800001, 0x00800000, 0x80800000),   # (1+u) 2^-126 - 2^-126: smallest subnormal
    (0x3F800000, 0x00800000, 0x80800000),   # exact cancellation to +0 at the bottom
    (0x3F800000, 0x3F800000, 0x33800000),   # 1 + 2^-24: tie to even
    (0x3F800000, 0x3F800000, 0x33800001),   # just above the tie
    (0x3F800000, 0x3F800000, 0x00000001),   # 1 + tiny: 1.0
    (0x3F800000, 0xBF800000, 0x00000001),   # -1 + tiny: -1.0
    # Products exactly half-way between two floats (1.5 (1 + 2^-23): even neighbour above;
    # 1.5 (1 + 3 * 2^-23): even neighbour below) and addends so small that they reach the
    # sum only through the alignment's sticky bit (2^-60, 2^-149), or just inside the
    # window (2^-47): the addend's sign alone decides the rounding.
    *[(a, 0x3FC00000, c) for a in (0x3F800001, 0x3F800003)
      for c in (0x21800000, 0xA1800000, 0x00000001, 0x80000001, 0x28000000, 0xA8000000)],
    (0x3F800000, 0x33800000, 0x3F800000),   # addend dominates, product a tie
    (0x3F800000, 0x33800001, 0x3F800000),
    (0x7F7FFFFF, 0x40000000, 0xFF7FFFFF),   # 2 max - max = max: no intermediate overflow
    (0x7F7FFFFF, 0x3F800000, 0x73000000),   # max + half an ulp: tie, overflows
    (0x5F800000, 0x5F800000, 0xFF7FFFFF),   # 2^128 - max: finite, exact 2^104
    (0x7F800000, 0x00000000, 0x3F800000),   # inf * 0 + 1: NaN
    (0x7F800000, 0x3F800000, 0xFF800000),   # inf - inf: NaN
    (0x7F800000, 0x3F800000, 0x7F800000),
    (0x3F800000, 0x3F800000, 0x7FC00000),   # NaN addend
    (0x7F800000, 0x00000000, 0x7FC00000),
    (0x00000001, 0x00000001, 0x80000000),   # 2^-298 - 0: -0? no: rounds to +0
    (0x80000001, 0x00000001, 0x00000000),   # -2^-298 + 0: -0 after rounding
    (0x00000001, 0x00000001, 0x00000001),   # smallest subnormal + 2^-298
    (0x00000001, 0x00000001, 0x80000001),   # -smallest + 2^-298: rounds back
]


# Products that round in the subnormal range with the excess over a rounding point only in
# the bits that the shift into that range pushes out of the product: a 48-bit product P of
# two significands whose top bit has exponent 1 - s (so that it shifts right by s) keeps
# its bits s + 24 .. 47, rounds at bit s + 23, and loses bits 0 .. s - 1 in the shift. When
# P exceeds the rounding point by less than 2^s, nothing but those lost bits tells the
# result from a tie. Random operands land there with a probability of about 2^-23.
_SUBNORMAL_SHIFTS = (24, 23, 22, 20, 16, 12)
_SIGNIFICAND_MIN, _SIGNIFICAND_END = 1 << 23, 1 << 24


def _factor_pairs_near(target, margin, count=2, scan=1 << 15):
    """Up to ``count`` pairs of 24-bit significands (hidden bit set) whose product exceeds
    ``target`` by less than ``margin``, and as many whose product falls short of it by
    less than ``margin``, found by scanning odd first factors down from the largest that
    leaves the second one a 24-bit significand."""
    above, below = [], []
    top = min(_SIGNIFICAND_END - 1, target // _SIGNIFICAND_MIN) | 1
    for ma in range(top, max(_SIGNIFICAND_MIN, top - 2 * scan), -2):
        for mb, side in ((-(-target // ma), above), (target // ma, below)):
            if _SIGNIFICAND_MIN <= mb < _SIGNIFICAND_END and 0 < abs(ma * mb - target) < margin \
                    and len(side) < count:
                side.append((ma, mb))
        if len(above) == len(below) == count:
            break
    return above + below


def _normal_bits(significand, exponent):
    return (exponent << 23) | (significand - _SIGNIFICAND_MIN)


@functools.lru_cache(maxsize=None)
def subnormal_rounding_products():
    """(a, b) pairs of normal binary32 patterns whose products round in the subnormal
    range within less than the lost bits of a rounding point: just above and just below
    the half-way point between the two nearest subnormals (or exactly on it), for results
    that round to even downwards (where a lost sticky bit turns a round-up into a tie
    and the tie rounds down), upwards, and at the top of the subnormal range (where the
    round-up carries into the smallest normal)."""
    pairs = []
    for shift in _SUBNORMAL_SHIFTS:
        exponent_sum = 127 - shift          # so that the product's bit 47 has exponent 1 - shift
        ea = exponent_sum // 2
        eb = exponent_sum - ea
        first_odd = max(1, -(-(1 << 46) >> (23 + shift)) | 1)
        last_odd = ((1 << 48) >> (23 + shift)) - 1
        # Multiples (odd: a half-way point) of the rounding position: kept part even, odd,
        # and the largest.
        for multiple in sorted({first_odd if first_odd % 4 == 1 else first_odd + 2,
                                first_odd if first_odd % 4 == 3 else first_odd + 2, last_odd}):
            target = multiple << (23 + shift)
            if not (1 << 46) <= target < (1 << 48):
                continue
            found = _factor_pairs_near(target, 1 << shift)
            if target >> 23 << 23 == target and _SIGNIFICAND_MIN <= target >> 23 < _SIGNIFICAND_END:
                found.append((target >> 23, _SIGNIFICAND_MIN))    # exactly on the tie
            pairs += [(_normal_bits(ma, ea), _normal_bits(mb, eb)) for ma, mb in found]
    return pairs


# Addends that leave such a product's rounding as it is (zeros) or move the result by whole
# subnormal steps: by two keeps the parity of the kept part, by one flips it.
_TINY_ADDENDS = (0x00000000, 0x80000000, 0x00000001, 0x00000002, 0x80000002)


def directed_operands(op):
    """Operand arrays of the directed table for ``op``: every pair (or a cross product
    of a smaller set of triples for fma) of :data:`SPECIAL_VALUES` plus the op's
    boundary cases, each also with both operand signs flipped."""
    if op in _PREDICATES:
        return _pairs(SPECIAL_VALUES)
    if op == "select":
        a, b = _pairs(SPECIAL_VALUES)
        # Masks cycle through 0 and 1 and through words with their other bits set.
        c = np.resize(np.array([0, 1, 0xFFFFFFFE, 0xFFFFFFFF], dtype=np.uint32), len(a))
        return [a, b, c]
    if op in ("add", "sub", "min", "max", "div"):
        operands = _pairs(SPECIAL_VALUES)
        cases = _ADDSUB_CASES if op in ("add", "sub") else _MUL_CASES
        extra = cases + [(a ^ 0x80000000, b ^ 0x80000000) for a, b in cases] \
            + [(b, a) for a, b in cases]
        return [np.concatenate([column, extra_column])
                for column, extra_column in zip(operands, _columns(extra, 2))]
    if op == "mul":
        operands = _pairs(SPECIAL_VALUES)
        cases = _MUL_CASES + subnormal_rounding_products()
        extra = cases + [(b, a ^ 0x80000000) for a, b in cases]
        return [np.concatenate([column, extra_column])
                for column, extra_column in zip(operands, _columns(extra, 2))]
    if op == "fma":
        triples = list(itertools.product(_FMA_SPECIALS.tolist(), repeat=3))
        cases = _FMA_CASES + [(a, b, c) for a, b in subnormal_rounding_products()
                              for c in _TINY_ADDENDS]
        triples += cases + [(a ^ 0x80000000, b, c ^ 0x80000000) for a, b, c in cases] \
            + [(b, a, c) for a, b, c in cases]
        return _columns(triples, 3)
    if op in ("sqrt", "f32_to_bf16", "abs", "neg"):
        return [SPECIAL_VALUES.copy()]
    if op == "bf16_to_f32":
        return [np.unique(SPECIAL_VALUES >> 16).astype(np.uint32)]
    raise ValueError(f"unknown FP op {op!r}")


# Biased random operands -----------------------------------------------------------------

def _fraction_patterns(rng, n):
    """Fractions biased toward all ones, all zeros, single bits and halfway patterns."""
    kind = rng.integers(0, 6, n)
    random_bits = rng.integers(0, 1 << 23, n, dtype=np.uint32)
    low_ones = (np.uint32(1) << rng.integers(0, 24, n).astype(np.uint32)) - np.uint32(1)
    one_bit = np.uint32(1) << rng.integers(0, 23, n).astype(np.uint32)
    return np.select([kind == 0, kind == 1, kind == 2, kind == 3, kind == 4],
                     [random_bits, np.uint32(0x7FFFFF), low_ones,
                      np.uint32(0x7FFFFF) ^ low_ones, one_bit], random_bits).astype(np.uint32)


def random_floats(rng, n):
    """Binary32 patterns: a quarter uniform bits, the rest with exponents biased to the
    extremes (zero/subnormal, smallest normals, largest finite, inf/NaN) and to the
    middle, and fractions from :func:`_fraction_patterns`."""
    uniform = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    extreme = np.array([0, 0, 0, 1, 2, 3, 252, 253, 254, 254, 255], dtype=np.uint32)
    exponent = np.where(rng.random(n) < 0.5, rng.choice(extreme, n),
                        rng.integers(97, 158, n)).astype(np.uint32)
    sign = rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)
    biased = sign | (exponent << np.uint32(23)) | _fraction_patterns(rng, n)
    return np.where(rng.random(n) < 0.25, uniform, biased).astype(np.uint32)


def _near(rng, x, span):
    """Patterns close to ``x``: exponent moved by up to ``span`` binades, fraction
    partly kept, sign random (so sums cancel as often as they add)."""
    n = len(x)
    exponent = ((x >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int64)
    exponent = np.clip(exponent + rng.integers(-span, span + 1, n), 0, 254).astype(np.uint32)
    keep_bits = rng.integers(0, 24, n).astype(np.uint32)
    keep_mask = ~((np.uint32(1) << keep_bits) - np.uint32(1)) & np.uint32(0x7FFFFF)
    fraction = (x & keep_mask) | (_fraction_patterns(rng, n) & ~keep_mask & np.uint32(0x7FFFFF))
    sign = rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)
    return (sign | (exponent << np.uint32(23)) | fraction).astype(np.uint32)


def _product_near_boundaries(rng, a):
    """Second factors whose products with ``a`` land near the underflow and overflow
    boundaries or near 1."""
    n = len(a)
    ea = ((a >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int64)
    target = rng.choice(np.array([-23, -10, 0, 1, 2, 127, 253, 254, 255]), n)
    eb = np.clip(target - ea + 127 + rng.integers(-2, 3, n), 0, 254).astype(np.uint32)
    sign = rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)
    return (sign | (eb << np.uint32(23)) | _fraction_patterns(rng, n)).astype(np.uint32)


def random_operands(op, n, seed):
    """``n`` biased random operand tuples for ``op``, reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    a = random_floats(rng, n)
    mix = rng.random(n)
    if op in ("add", "sub", "min", "max", *_PREDICATES):
        b = np.where(mix < 0.5, _near(rng, a, 2),
                     np.where(mix < 0.75, _near(rng, a, 30), random_floats(rng, n)))
        return [a, b.astype(np.uint32)]
    if op == "select":
        # Masks as the compare unit writes them, and arbitrary words whose bit 0 decides.
        c = np.where(mix < 0.5, rng.integers(0, 2, n),
                     rng.integers(0, 1 << 32, n, dtype=np.uint64)).astype(np.uint32)
        return [a, random_floats(rng, n), c]
    if op in ("mul", "div"):
        b = np.where(mix < 0.5, _product_near_boundaries(rng, a), random_floats(rng, n))
        return [a, b.astype(np.uint32)]
    if op == "fma":
        b = np.where(mix < 0.4, _product_near_boundaries(rng, a), random_floats(rng, n)).astype(np.uint32)
        with np.errstate(all="ignore"):
            product = (bits_to_float(a) * bits_to_float(b)).astype(np.float32).view(np.uint32)
        near_product = _near(rng, product & np.uint32(0x7FFFFFFF), 1)
        # Negated rounded product: the sum cancels to the product's rounding error.
        cancel = product ^ np.uint32(0x80000000)
        choice = rng.random(n)
        c = np.select([choice < 0.25, choice < 0.5, choice < 0.75],
                      [cancel, near_product, _near(rng, product, 40)], random_floats(rng, n))
        return [a, b, c.astype(np.uint32)]
    if op in ("sqrt", "f32_to_bf16", "abs", "neg"):
        return [a]
    if op == "bf16_to_f32":
        return [(a >> np.uint32(16)).astype(np.uint32)]
    raise ValueError(f"unknown FP op {op!r}")
