"""Building blocks shared by the IEEE-754 binary32 units: field layout, unpacking and
classification, leading-zero count, shifts that keep a sticky bit, and the final
normalize / round-to-nearest-even / pack step with subnormal and overflow handling.

All helpers are combinational: they take Amaranth values and return values (or drive a
signal in the given module), so that each unit places its own pipeline registers.

Conventions used throughout:

* A *significand* is an unsigned integer whose top bit has the weight of the hidden bit.
* An *exponent* is a signed integer in biased form: a significand whose top bit is set and
  whose exponent is ``e`` has the value ``1.xxx * 2**(e - BIAS)``.
* Subnormal and zero inputs unpack with exponent 1 and hidden bit 0, so that one formula
  covers every finite input.
"""

from amaranth.hdl import Cat, Const, Mux, Signal, Value, unsigned
from amaranth.lib import data


__all__ = [
    "EXPONENT_BITS", "FRACTION_BITS", "PRECISION", "BIAS", "EXPONENT_MAX", "CANONICAL_NAN",
    "INFINITY", "float32_layout", "unpacked_layout", "unpack", "leading_zeros",
    "block_leading_zeros", "combine_block_counts",
    "shift_right_sticky", "subnormal_limit_mask", "shift_left_or_take", "right_shift_below_range",
    "round_to_nearest_even",
    "pack_special", "pack_special_or_zero",
]


EXPONENT_BITS = 8
FRACTION_BITS = 23
PRECISION = FRACTION_BITS + 1       # significand bits including the hidden bit
BIAS = 127
EXPONENT_MAX = (1 << EXPONENT_BITS) - 1   # the all-ones field of inf and NaN
CANONICAL_NAN = 0x7FC00000
INFINITY = 0x7F800000


float32_layout = data.StructLayout({
    "fraction": unsigned(FRACTION_BITS),
    "exponent": unsigned(EXPONENT_BITS),
    "sign":     unsigned(1),
})


unpacked_layout = data.StructLayout({
    "sign":        unsigned(1),
    # Biased exponent of the significand's top bit; 1 for subnormals and zeros.
    "exponent":    unsigned(EXPONENT_BITS),
    # Hidden bit (0 for subnormals and zeros) followed by the fraction.
    "significand": unsigned(PRECISION),
    "zero":        unsigned(1),
    "subnormal":   unsigned(1),
    "inf":         unsigned(1),
    "nan":         unsigned(1),
})


def unpack(m, bits, *, name=None):
    """Split a binary32 bit pattern (a 32-bit value) into an :data:`unpacked_layout` view
    driven combinationally in module ``m``."""
    fields = data.View(float32_layout, bits)
    unpacked = Signal(unpacked_layout, name=name)
    exponent_zero = fields.exponent == 0
    exponent_ones = fields.exponent == EXPONENT_MAX
    fraction_zero = fields.fraction == 0
    m.d.comb += [
        unpacked.sign.eq(fields.sign),
        unpacked.exponent.eq(Mux(exponent_zero, 1, fields.exponent)),
        unpacked.significand.eq(Cat(fields.fraction, ~exponent_zero)),
        unpacked.zero.eq(exponent_zero & fraction_zero),
        unpacked.subnormal.eq(exponent_zero & ~fraction_zero),
        unpacked.inf.eq(exponent_ones & fraction_zero),
        unpacked.nan.eq(exponent_ones & ~fraction_zero),
    ]
    return unpacked


def _ceil_log2(n):
    return max(0, (n - 1).bit_length())


def leading_zeros(value):
    """Number of leading zero bits of ``value`` (its width when it is zero), as a
    log-depth tree so that wide counts stay short in logic levels."""
    value = Value.cast(value)
    width = len(value)
    padded_width = 1 << _ceil_log2(width)
    # Ones below the value make the count of a zero value come out as ``width``.
    padded = Cat(Const((1 << (padded_width - width)) - 1, padded_width - width), value)

    def count(bits):
        if len(bits) == 1:
            return ~bits[0], Const(0, 0)
        half = len(bits) // 2
        low_zero, low_count = count(bits[:half])
        high_zero, high_count = count(bits[half:])
        return high_zero & low_zero, Mux(high_zero, Cat(low_count, 1), Cat(high_count, 0))

    _, result = count(padded)
    return result if len(result) else Const(0, 1)


def block_leading_zeros(value, block_bits=16):
    """First half of a two-stage leading-zero count for wide values: per block of
    ``block_bits`` (a power of two), from the top, whether it is all zeros and its own
    leading-zero count. Combine (after a register) with :func:`combine_block_counts`."""
    value = Value.cast(value)
    width = len(value)
    blocks = (width + 1 + block_bits - 1) // block_bits
    # At least one padding one below the value, so a zero value counts to ``width``.
    pad = blocks * block_bits - width
    padded = Cat(Const((1 << pad) - 1, pad), value)
    tops = [padded[(blocks - 1 - i) * block_bits:(blocks - i) * block_bits] for i in range(blocks)]
    return Cat(*(top == 0 for top in tops)), Cat(*(leading_zeros(top)[:_ceil_log2(block_bits)]
                                                   for top in tops))


def combine_block_counts(zero_blocks, block_counts, block_bits=16):
    """Second half of the two-stage count: the leading zeros of the whole value from
    :func:`block_leading_zeros`'s outputs (block ``i`` from the top contributes
    ``i * block_bits`` plus its own count; no adder is needed)."""
    index_bits = _ceil_log2(block_bits)
    blocks = len(zero_blocks)
    count = Cat(block_counts[(blocks - 1) * index_bits:], Const(blocks - 1, _ceil_log2(blocks)))
    for i in reversed(range(blocks - 1)):
        own = Cat(block_counts[i * index_bits:(i + 1) * index_bits], Const(i, _ceil_log2(blocks)))
        count = Mux(zero_blocks[i], count, own)
    return count


def shift_right_sticky(value, amount):
    """``value >> amount`` and whether any one bit was shifted out (the sticky bit).
    ``amount`` is unsigned; amounts of the value's width or more shift everything out.
    The sticky bit comes from a mask of the lost positions, in parallel with the shifter
    rather than accumulated through its levels."""
    value = Value.cast(value)
    amount = Value.cast(amount)
    width = len(value)
    levels = _ceil_log2(width + 1)
    low = amount[:levels]
    everything = amount[levels:].any() if len(amount) > levels else Const(0, 1)
    all_ones = Const((1 << width) - 1, width)
    lost_positions = Mux(everything, all_ones, ~(all_ones << low)[:width])
    return Mux(everything, 0, (value >> low)[:width]), (value & lost_positions).any()


def subnormal_limit_mask(exponent, width):
    """A one-hot marker to OR into a ``width``-bit significand whose top bit has exponent
    ``exponent`` before counting its leading zeros: the count then stops where a further
    left shift would take the exponent below 1, so it is directly the normalization shift,
    subnormal results included. Zero when the exponent leaves room for any shift; the top
    bit (no left shift) when the exponent is 1 or less."""
    room = (Value.cast(exponent).as_signed() - 1).as_signed()
    levels = _ceil_log2(width + 1)
    negative = room[-1]
    # Decided from the bits of one subtraction rather than by further comparisons.
    beyond = ~negative & room[levels:-1].any() if len(room) > levels + 1 else Const(0, 1)
    top = Const(1 << (width - 1), width)
    return Mux(negative, top, Mux(beyond, 0, (top >> room[:levels])[:width]))


def shift_left_or_take(significand, exponent, left_shift, right_shifted):
    """Normalize a significand whose top bit has exponent ``exponent``: shift it left by
    ``left_shift`` (the :func:`leading_zeros` of the significand with its
    :func:`subnormal_limit_mask` ORed in); or, when the exponent is below 1, take
    ``right_shifted``, the significand already shifted right by ``1 - exponent`` into the
    subnormal form (see :func:`right_shift_below_range`). Returns the significand and its
    exponent."""
    significand = Value.cast(significand)
    width = len(significand)
    exponent = Value.cast(exponent).as_signed()
    below_range = exponent < 1
    left = (significand << left_shift)[:width]
    return (Mux(below_range, right_shifted, left),
            Mux(below_range, 1, exponent - left_shift).as_signed())


def right_shift_below_range(exponent):
    """The right shift ``1 - exponent`` that takes a significand whose top bit has
    exponent ``exponent`` (below 1) into the subnormal form (unsigned; meaningless when
    the exponent is 1 or more)."""
    exponent = Value.cast(exponent).as_signed()
    return (1 - exponent).as_unsigned()[:len(exponent)]


def round_to_nearest_even(sign, exponent, significand, sticky=Const(0, 1)):
    """The binary32 bit pattern of a normalized (or subnormal-form) significand rounded to
    nearest, ties to even.

    significand: at least PRECISION + 1 bits; its top bit is the hidden bit, clear for
                 the subnormal form, in which case ``exponent`` must be 1.
    exponent:    signed biased exponent of the top bit; 255 or more overflows to infinity.
    sticky:      set when nonzero bits lie below the significand.

    A zero significand gives a zero of the given sign. The rounding carry runs into the
    exponent field, which takes the largest subnormal to the smallest normal and the
    largest finite value to infinity with no extra logic.
    """
    significand = Value.cast(significand)
    width = len(significand)
    assert width >= PRECISION + 1, "need at least one bit below the kept precision"
    exponent = Value.cast(exponent).as_signed()
    kept = significand[width - PRECISION:]
    guard = significand[width - PRECISION - 1]
    below = significand[:width - PRECISION - 1].any() | sticky
    increment = guard & (below | kept[0])
    hidden = kept[PRECISION - 1]
    field = Mux(hidden, exponent[:EXPONENT_BITS], 0)
    rounded = (Cat(kept[:FRACTION_BITS], field) + increment)[:31]
    overflow = hidden & (exponent >= EXPONENT_MAX)
    return Cat(Mux(overflow, INFINITY, rounded)[:31], sign)


def pack_special(sign, *, nan, inf):
    """The canonical NaN when ``nan``, else an infinity of ``sign`` (valid when ``inf``)."""
    return Mux(nan, CANONICAL_NAN, Cat(Const(INFINITY, 31), sign))


def pack_special_or_zero(sign, *, nan, zero):
    """The canonical NaN when ``nan``, else a zero of ``sign`` when ``zero``, else an
    infinity of ``sign``."""
    return Mux(zero & ~nan, Cat(Const(0, 31), sign), pack_special(sign, nan=nan, inf=1))
