"""The back end shared by the adder, multiplier and fused multiply-add: three pipeline
stages that turn an exact (or sticky-tagged) significand into a binary32 result.

  A. count leading zeros, with the subnormal limit folded into the count; in parallel,
     shift right into the subnormal form (for exponents below the range) with its
     sticky bit; choose the sign of a zero result.
  B. shift left to normalize, or take the right-shifted form; the exponent follows.
  C. round to nearest even, pack; NaN and infinity override.

For wide significands (the FMA's 77 bits) the count is split over two stages (blocks of
16 bits, then the first nonzero block), one more stage of latency.

Each stage holds one kind of logic (a log-depth tree beside a barrel shifter, a barrel
shifter, a carry chain), so that each fits one clock period. Quantities that depend only
on the exponent (:func:`back_end_controls`) are computed by the caller one stage ahead.
"""

from amaranth.hdl import Const, Mux, Value

from .float32 import (block_leading_zeros, combine_block_counts, leading_zeros,
                      right_shift_below_range, round_to_nearest_even, shift_left_or_take,
                      shift_right_sticky, subnormal_limit_mask)


__all__ = ["back_end_stages", "back_end_controls", "normalize_round_pack"]


def back_end_stages(split_count=False):
    """Pipeline stages of :func:`normalize_round_pack`."""
    return 4 if split_count else 3


def back_end_controls(exponent, width):
    """The exponent-only inputs of :func:`normalize_round_pack` for a ``width``-bit
    significand whose top bit has exponent ``exponent``: register them with the stage
    before the back end."""
    return {"limit_mask": subnormal_limit_mask(exponent, width),
            "right_shift": right_shift_below_range(exponent)}


def normalize_round_pack(pipe, *, sign, zero_sign, exponent, significand, limit_mask,
                         right_shift, special, special_bits, sticky=Const(0, 1),
                         split_count=False):
    """Registers of the back-end stages in ``pipe`` (three, or four with ``split_count``);
    returns the result register.

    sign:         sign of a nonzero result.
    zero_sign:    sign of the result when the significand is exactly zero.
    exponent:     signed exponent of the significand's top bit.
    significand:  exact result significand (any width of at least 25 bits).
    limit_mask, right_shift: from :func:`back_end_controls`, registered by the caller.
    special:      when set, the result is ``special_bits`` (NaN or infinity).
    sticky:       nonzero bits lie below the significand.
    split_count:  count leading zeros over two stages (see :func:`back_end_stages`).
    """
    significand = Value.cast(significand)
    right_shifted, right_lost = shift_right_sticky(significand, right_shift)
    stage = {"right_shifted": right_shifted, "right_lost": right_lost,
             "sign": Mux(significand == 0, zero_sign, sign),
             "significand": significand, "exponent": exponent, "sticky": sticky,
             "special": special, "special_bits": special_bits}
    if split_count:
        # Stage A0: per-block counts; the rest of stage A's work moves here too.
        zero_blocks, block_counts = block_leading_zeros(significand | limit_mask)
        early = pipe.register_stage("count_", {
            "zero_blocks": zero_blocks, "block_counts": block_counts, **stage})
        stage = {name: early[name] for name in stage}
        stage["left_shift"] = combine_block_counts(early["zero_blocks"], early["block_counts"])
    else:
        stage["left_shift"] = leading_zeros(significand | limit_mask)

    # Stage A.
    a = pipe.register_stage("norm_", stage)

    # Stage B.
    normalized, normalized_exponent = shift_left_or_take(
        a["significand"], a["exponent"], a["left_shift"], a["right_shifted"])
    below_range = a["exponent"].as_signed() < 1
    b = pipe.register_stage("round_", {
        "significand": normalized, "exponent": normalized_exponent,
        "sticky": (below_range & a["right_lost"]) | a["sticky"], "sign": a["sign"],
        "special": a["special"], "special_bits": a["special_bits"]})

    # Stage C.
    rounded = round_to_nearest_even(b["sign"], b["exponent"], b["significand"], b["sticky"])
    return pipe.register(Mux(b["special"], b["special_bits"], rounded), "packed")
