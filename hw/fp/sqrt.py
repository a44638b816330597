"""Correctly rounded binary32 square root (round to nearest, ties to even), iterative.

The operand is normalized to m · 2^e with m in [1, 2) (subnormals included) and, for odd
e, rewritten as 2m · 2^(e−1) so the exponent halves exactly. A radix-2 restoring integer
square root then produces one root bit per cycle: the 25 bits of ``floor(sqrt(m · 2^48))``,
24 significand bits and a guard bit, plus a sticky bit from the final remainder. The
root of any positive binary32 lies in [2^−75, 2^64), always normal, so rounding never
denormalizes or overflows; an exact tie cannot occur either, but the rule applied is
plain round to nearest, ties to even.

Special cases (IEEE 754): NaN and any operand below zero (−∞ included) give the canonical
NaN 0x7FC00000; sqrt(±0) = ±0; sqrt(+∞) = +∞. One operation (:class:`~.opcodes.SqrtOp`): ``SQRT``; the ``op`` field is ignored.

Handshake: as :class:`~hw.fp.divide.FPDivide`: ``operands.ready`` is low while the unit
works; the result is offered ``CYCLES_PER_RESULT`` cycles after the cycle that accepted its
record, and the next record is accepted in the cycle the result is taken.
``CYCLES_PER_RESULT`` = 29: the accepting cycle, leading-zero count and shift (2), 25
recurrence steps, rounding.
"""

from amaranth.hdl import Module, Signal, Mux, Cat, Const
from amaranth.lib import wiring

from .float32 import BIAS, CANONICAL_NAN, PRECISION, leading_zeros, unpack
from .interface import FPUnitSignature
from .opcodes import SqrtOp
from .pipeline import iterative_handshake


__all__ = ["FPSqrt"]


ROOT_BITS = PRECISION + 1           # significand and guard bit


class FPSqrt(wiring.Component):
    """``sqrt(a)``; one result every :data:`CYCLES_PER_RESULT` cycles."""

    OPS = SqrtOp
    CYCLES_PER_RESULT = 4 + ROOT_BITS

    def __init__(self):
        super().__init__(FPUnitSignature(self.OPS))

    def elaborate(self, platform):
        m = Module()
        operands, result = self.operands, self.result

        operand = Signal(32)
        special = Signal()
        special_value = Signal(32)
        shift = Signal(5)               # leading zeros of the significand
        exponent = Signal(8)            # biased exponent of the root
        radicand = Signal(ROOT_BITS + 1)  # the radicand bits not yet brought down
        remainder = Signal(ROOT_BITS + 3)  # <= 2 · root throughout
        root = Signal(ROOT_BITS)
        step = Signal(range(ROOT_BITS))

        # Classification and normalization of the registered operand.
        x = unpack(m, operand, name="x")
        significand = (x.significand << shift)[0:PRECISION]
        # Unbiased exponent of the normalized significand; its parity decides whether
        # the significand is doubled so that the exponent halves exactly.
        unbiased = x.exponent - shift - BIAS
        odd = unbiased[0]
        half_exponent = (unbiased - odd) >> 1     # arithmetic shift of an even number

        # One step of the restoring square root: bring down two radicand bits and try
        # appending a 1 to the root.
        extended = Cat(radicand[-2:], remainder)
        trial = Cat(Const(1, 2), root)
        fits = extended >= trial
        partial = Mux(fits, extended - trial, extended)

        # Rounding: the increment goes into exponent and fraction together; the root of
        # a binary32 is normal and far from overflow.
        round_up = root[0] & (root[1] | (remainder != 0))
        rounded = (Cat(root[1:PRECISION], exponent) + round_up)[0:31]

        with m.If(operands.valid & operands.ready):
            m.d.sync += operand.eq(operands.payload.a)

        with iterative_handshake(m, operands, result, start="COUNT"):
            # Normalization takes two cycles, counting and shifting, to keep it off the
            # critical path.
            with m.State("COUNT"):
                m.d.sync += [
                    special.eq(x.nan | x.inf | x.zero | x.sign),
                    special_value.eq(Mux(x.zero, operand,
                                     Mux(x.nan | x.sign, CANONICAL_NAN, operand))),
                    shift.eq(leading_zeros(x.significand)),
                ]
                m.next = "NORMALIZE"
            with m.State("NORMALIZE"):
                m.d.sync += [
                    exponent.eq(half_exponent + BIAS),
                    # The top 26 of the 50 radicand bits (significand · 2^25, doubled
                    # for an odd exponent); the rest are zeros.
                    radicand.eq(Mux(odd, Cat(Const(0, 2), significand),
                                         Cat(Const(0, 1), significand, Const(0, 1)))),
                    remainder.eq(0),
                    root.eq(0),
                    step.eq(0),
                ]
                m.next = "ROOT"
            with m.State("ROOT"):
                m.d.sync += [root.eq(Cat(fits, root[:-1])),
                             remainder.eq(partial),
                             radicand.eq(radicand << 2),
                             step.eq(step + 1)]
                with m.If(step == ROOT_BITS - 1):
                    m.next = "ROUND"
            with m.State("ROUND"):
                m.d.sync += result.payload.eq(Mux(special, special_value, Cat(rounded, 0)))
                m.next = "DONE"
        return m
