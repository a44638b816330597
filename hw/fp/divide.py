"""Correctly rounded binary32 division a / b (round to nearest, ties to even), fully
pipelined: one result per cycle.

A radix-2 restoring recurrence unrolled into one pipeline stage per quotient bit. Each
stage subtracts the divisor from the partial remainder (one 25-bit carry chain, whose
borrow is the quotient bit) and keeps the difference or the remainder; no stage holds
more than that, so the unit keeps the clock of the iterative recurrence it replaced.
docs/fp-synthesis.md compares it with a multiplier-based design.

Stages:
  1. unpack; special cases; leading zeros of both significands.
  2. normalize both significands to [1, 2) (subnormal operands included) and form the
     biased exponent of the quotient's 2^0 bit.
  3-28. the 26 bits of ``floor(ma · 2^25 / mb)``: the quotient of significands lies in
     (0.5, 2), so 24 significand bits and a guard bit on whichever side of 1 it falls
     take 26 steps; the last remainder gives the sticky bit. The last step also plans,
     from the exponent alone, the alignment of a quotient below the normal range.
  29. align: one right shift of the quotient takes it to its 24 significand bits and
     guard bit: by its leading zero (0 or 1 place) in the normal range, further into the
     subnormal position below it; the bits shifted out join the sticky bit.
  30. round to nearest even and pack; the rounding carry runs into the exponent field,
     so the largest subnormal becomes the smallest normal and the largest finite value
     infinity (float32.round_to_nearest_even).

Special cases (IEEE 754): a NaN operand, 0/0 and ∞/∞ give the canonical NaN 0x7FC00000;
∞/y and x/0 give ±∞; 0/y and x/∞ give ±0; the sign is the XOR of the operand signs.
One operation (:class:`~.opcodes.DivideOp`): ``DIV``; the ``op`` field is ignored.
"""

from amaranth.hdl import Cat, Const, Mux

from .float32 import (BIAS, PRECISION, leading_zeros, pack_special_or_zero,
                      round_to_nearest_even, shift_right_sticky, unpack)
from .opcodes import DivideOp
from .pipeline import PipelinedUnit


__all__ = ["FPDivide"]


QUOTIENT_BITS = PRECISION + 2       # the leading bit may sit at 2^0 or 2^-1, plus guard
# The alignment's largest shift, to which longer ones saturate: any of 26 places or more
# loses every bit of the quotient, and 31 is the most a 5-bit amount holds.
_SHIFT_SATURATED = 31


class FPDivide(PipelinedUnit):
    """Binary32 ``a / b``; latency :data:`LATENCY` cycles."""

    OPS = DivideOp
    LATENCY = 2 + QUOTIENT_BITS + 2

    def datapath(self, m, pipe, record):
        a = unpack(m, record.a, name="a")
        b = unpack(m, record.b, name="b")

        # Stage 1.
        nan = a.nan | b.nan | (a.inf & b.inf) | (a.zero & b.zero)
        s1 = pipe.register_stage("count_", {
            "special": a.nan | b.nan | a.inf | b.inf | a.zero | b.zero,
            "nan": nan, "zero": a.zero | b.inf,
            "sign": a.sign ^ b.sign,
            "a": a.significand, "negated_b": -b.significand,
            "a_exponent": a.exponent, "b_exponent": b.exponent,
            "a_shift": leading_zeros(a.significand), "b_shift": leading_zeros(b.significand),
        })
        passed = ("special", "nan", "zero", "sign")

        # Stage 2. The divisor d in [2^23, 2^24) is kept as 2^25 - d, so that each step
        # adds (with a subtraction per step the unit took 6 % more LUTs on ECP5); its top
        # bit is 1 and is not kept. A zero divisor is a special case, whose quotient is
        # not used. -(b << shift) = (-b) << shift modulo 2^25.
        s2 = pipe.register_stage("normalized_", {
            "remainder": (s1["a"] << s1["a_shift"])[:PRECISION],
            "divisor": (s1["negated_b"] << s1["b_shift"])[:PRECISION],
            "exponent": ((s1["a_exponent"] - s1["a_shift"]) - (s1["b_exponent"] - s1["b_shift"])
                         + BIAS),
            **{name: s1[name] for name in passed},
        })
        passed += ("exponent", "divisor")

        # Stages 3-28: one quotient bit each. The remainder r is below twice the divisor
        # before a step and below the divisor after it; it is kept in that form, the
        # doubling being the next step's wiring. r + (2^25 - d) carries out of 25 bits
        # exactly when r >= d, and its low bits are then r - d.
        remainder = s2["remainder"]
        quotient = Const(0, 0)
        stage = s2
        for step in range(QUOTIENT_BITS):
            total = remainder + Cat(stage["divisor"], Const(1, 1))
            fits = total[PRECISION + 1]
            values = {"remainder": Mux(fits, total, remainder)[:PRECISION],
                      "quotient": Cat(fits, quotient),
                      **{name: stage[name] for name in passed}}
            if step == QUOTIENT_BITS - 1:
                # With the quotient's 2^0 bit at exponent 2 or more, the result is normal
                # whichever side of 1 the quotient falls; below that, the quotient's bit 0
                # is the guard bit of a result at exponent 1, 2 - exponent places down.
                exponent = stage["exponent"]
                values["normal_range"] = exponent >= 2
                values["subnormal_shift"] = Mux(exponent <= 2 - _SHIFT_SATURATED,
                                                _SHIFT_SATURATED, (2 - exponent)[:5])
            stage = pipe.register_stage(f"step{step}_", values)
            remainder = Cat(Const(0, 1), stage["remainder"])
            quotient = stage["quotient"]

        # Stage 29.
        below_one = ~quotient[-1]
        shift = Mux(stage["normal_range"], ~below_one, stage["subnormal_shift"])
        aligned, lost = shift_right_sticky(quotient, shift)
        s29 = pipe.register_stage("aligned_", {
            "significand": aligned[:QUOTIENT_BITS - 1],
            "sticky": lost | (stage["remainder"] != 0),
            "exponent": Mux(stage["normal_range"], stage["exponent"] - below_one, 1),
            **{name: stage[name] for name in passed if name not in ("exponent", "divisor")},
        })

        # Stage 30.
        rounded = round_to_nearest_even(s29["sign"], s29["exponent"], s29["significand"],
                                        s29["sticky"])
        special = pack_special_or_zero(s29["sign"], nan=s29["nan"], zero=s29["zero"])
        return pipe.register(Mux(s29["special"], special, rounded), "packed")
