"""Correctly rounded binary32 division a / b (round to nearest, ties to even), iterative.

Subnormal operands are normalized first, then a radix-2 restoring recurrence produces one
quotient bit per cycle: the 26 bits of ``floor(ma · 2^25 / mb)`` for significands ma, mb in
[1, 2), which are 24 significand bits and a guard bit on whichever side of 1 the quotient
falls, plus a sticky bit from the final remainder. The result is rounded once: a quotient
below the normal range is first shifted right into the subnormal position (its lost bits
join the sticky bit), and the rounding increment is added to the packed exponent and
fraction together, so a carry turns the largest subnormal into the smallest normal, or
the largest finite value into infinity, exactly as IEEE 754 requires.

Special cases (IEEE 754): a NaN operand, 0/0 and ∞/∞ give the canonical NaN 0x7FC00000;
∞/y and x/0 give ±∞; 0/y and x/∞ give ±0; the sign is the XOR of the operand signs.
One operation (:class:`~.opcodes.DivideOp`): ``DIV``; the ``op`` field is ignored.

Handshake: the unit takes one operand record, holds ``operands.ready`` low while it works
and offers the result until it is taken; it takes the next record in the cycle the
result is taken. The result is offered ``CYCLES_PER_RESULT`` cycles after the cycle that
accepted its record, so with results taken at once the unit accepts one record every
``CYCLES_PER_RESULT`` = 31 cycles: the accepting cycle, leading-zero count and shift (2),
26 recurrence steps, alignment and rounding (2). It runs above 100 MHz on ECP5
(docs/fp-synthesis.md); a radix-4 recurrence would halve the steps but chain two 25-bit
subtractions per cycle.
"""

from amaranth.hdl import Module, Signal, Mux, Cat, Const, signed
from amaranth.lib import wiring

from .float32 import CANONICAL_NAN, INFINITY, PRECISION, leading_zeros, unpack
from .interface import FPUnitSignature
from .opcodes import DivideOp
from .pipeline import iterative_handshake


__all__ = ["FPDivide"]


QUOTIENT_BITS = PRECISION + 2       # the leading bit may sit at 2^0 or 2^-1, plus guard


class FPDivide(wiring.Component):
    """``a / b``; one result every :data:`CYCLES_PER_RESULT` cycles."""

    OPS = DivideOp
    CYCLES_PER_RESULT = 5 + QUOTIENT_BITS

    def __init__(self):
        super().__init__(FPUnitSignature(self.OPS))

    def elaborate(self, platform):
        m = Module()
        operands, result = self.operands, self.result

        dividend = Signal(32)
        divisor_bits = Signal(32)
        sign = Signal()
        special = Signal()
        special_value = Signal(32)
        a_shift = Signal(5)                 # leading zeros of the significands
        b_shift = Signal(5)
        a_exponent = Signal(signed(10))     # biased exponents of the normalized operands
        b_exponent = Signal(signed(10))
        divisor = Signal(PRECISION)
        remainder = Signal(PRECISION + 1)   # < 2 · divisor throughout
        quotient = Signal(QUOTIENT_BITS)
        step = Signal(range(QUOTIENT_BITS))
        kept = Signal(PRECISION + 1)        # aligned significand and guard bit
        inexact = Signal()                  # some bit below the guard bit is set
        exponent_field = Signal(8)
        overflow = Signal()

        # Classification of the registered operands.
        a = unpack(m, dividend, name="a")
        b = unpack(m, divisor_bits, name="b")
        signed_inf = Cat(Const(INFINITY, 31), sign)
        signed_zero = Cat(Const(0, 31), sign)
        invalid = a.nan | b.nan | (a.inf & b.inf) | (a.zero & b.zero)

        # One step of the restoring recurrence.
        fits = remainder >= divisor
        partial = Mux(fits, remainder - divisor, remainder)[0:PRECISION]

        # Exponent and subnormal alignment for both positions of the quotient's leading
        # bit (2^0, or 2^-1 for a quotient below 1). They depend only on the exponents,
        # which are constant during the recurrence, so a three-register chain computes
        # them there, settled long before the rounding stages read them.
        plans = []
        for below_one in (0, 1):
            biased = Signal(signed(10), name=f"biased_{below_one}")
            plan_overflow = Signal(name=f"overflow_{below_one}")
            plan_shift = Signal(range(QUOTIENT_BITS + 1), name=f"shift_{below_one}")
            plan_exponent = Signal(8, name=f"exponent_field_{below_one}")
            lost_mask = Signal(PRECISION + 1, name=f"lost_mask_{below_one}")
            m.d.sync += [
                biased.eq(a_exponent - b_exponent + (127 - below_one)),
                plan_overflow.eq(biased >= 0xFF),
                # Beyond 26 positions every bit falls below the guard position.
                plan_shift.eq(Mux(biased > 0, 0,
                              Mux(biased < -24, QUOTIENT_BITS, 1 - biased))),
                plan_exponent.eq(Mux(biased > 0, biased[0:8], 0)),
                lost_mask.eq((Const(1, QUOTIENT_BITS + 1) << plan_shift) - 1),
            ]
            plans.append((plan_shift, lost_mask, plan_exponent, plan_overflow))

        # Alignment: the quotient's 24 significand bits and guard bit, shifted into the
        # subnormal position if the result is tiny.
        below_one = ~quotient[QUOTIENT_BITS - 1]
        significand = Mux(below_one, quotient[:-1], quotient[1:])
        dropped = (remainder != 0) | (~below_one & quotient[0])
        (shift_0, mask_0, exponent_0, overflow_0), (shift_1, mask_1, exponent_1, overflow_1) = plans
        shift = Mux(below_one, shift_1, shift_0)
        lost = (significand & Mux(below_one, mask_1, mask_0)) != 0

        # Rounding: the increment goes into exponent and fraction together.
        round_up = kept[0] & (kept[1] | inexact)
        magnitude = (Cat(kept[1:PRECISION], exponent_field) + round_up)[0:31]
        rounded = Mux(overflow, signed_inf, Cat(magnitude, sign))

        # A record is taken when idle, or in the cycle the previous result is taken.
        with m.If(operands.valid & operands.ready):
            m.d.sync += [dividend.eq(operands.payload.a),
                         divisor_bits.eq(operands.payload.b),
                         sign.eq(operands.payload.a[31] ^ operands.payload.b[31])]

        with iterative_handshake(m, operands, result, start="COUNT"):
            # Normalization takes two cycles, counting and shifting, to keep it off the
            # critical path.
            with m.State("COUNT"):
                m.d.sync += [
                    special.eq(invalid | a.inf | b.inf | a.zero | b.zero),
                    special_value.eq(Mux(invalid, CANONICAL_NAN,
                                     Mux(a.inf | b.zero, signed_inf, signed_zero))),
                    a_shift.eq(leading_zeros(a.significand)),
                    b_shift.eq(leading_zeros(b.significand)),
                ]
                m.next = "NORMALIZE"
            with m.State("NORMALIZE"):
                m.d.sync += [
                    a_exponent.eq(a.exponent - a_shift),
                    b_exponent.eq(b.exponent - b_shift),
                    remainder.eq(a.significand << a_shift),
                    divisor.eq(b.significand << b_shift),
                    step.eq(0),
                ]
                m.next = "DIVIDE"
            with m.State("DIVIDE"):
                m.d.sync += [quotient.eq(Cat(fits, quotient[:-1])),
                             remainder.eq(Cat(Const(0, 1), partial)),
                             step.eq(step + 1)]
                with m.If(step == QUOTIENT_BITS - 1):
                    m.next = "ALIGN"
            with m.State("ALIGN"):
                m.d.sync += [kept.eq(significand >> shift),
                             inexact.eq(dropped | lost),
                             exponent_field.eq(Mux(below_one, exponent_1, exponent_0)),
                             overflow.eq(Mux(below_one, overflow_1, overflow_0))]
                m.next = "ROUND"
            with m.State("ROUND"):
                m.d.sync += result.payload.eq(Mux(special, special_value, rounded))
                m.next = "DONE"
        return m
