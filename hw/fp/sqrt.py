"""Correctly rounded binary32 square root (round to nearest, ties to even), fully
pipelined: one result per cycle.

A radix-2 restoring integer square root unrolled into one pipeline stage per root bit,
as the divider unrolls its recurrence (hw/fp/divide.py). Step k brings down two radicand
bits and tries appending a 1 to the k root bits found so far: one carry chain of k + 3
bits (2 in the first step), so the stages grow from 2 bits to 27.

The operand is normalized to m · 2^e with m in [1, 2) (subnormals included) and, for odd
e, rewritten as 2m · 2^(e−1) so the exponent halves exactly; the root's 25 bits are
``floor(sqrt(m · 2^48))``, 24 significand bits and a guard bit, plus a sticky bit from
the final remainder. The root of any positive binary32 lies in [2^−75, 2^64), always
normal, so rounding never denormalizes or overflows; an exact tie cannot occur either,
but the rule applied is plain round to nearest, ties to even.

Stages:
  1. unpack; special cases; leading zeros of the significand.
  2. normalize; the radicand's 26 nonzero bits (the other 24 of its 50 are zeros).
  3-27. the 25 root bits; the first of these steps also halves the exponent.
  28. round to nearest even and pack (float32.round_to_nearest_even).

Special cases (IEEE 754): NaN and any operand below zero (−∞ included) give the canonical
NaN 0x7FC00000; sqrt(±0) = ±0; sqrt(+∞) = +∞. One operation (:class:`~.opcodes.SqrtOp`):
``SQRT``; the ``op`` field is ignored.
"""

from amaranth.hdl import Cat, Const, Mux

from .float32 import (BIAS, PRECISION, leading_zeros, pack_special_or_zero,
                      round_to_nearest_even, unpack)
from .opcodes import SqrtOp
from .pipeline import PipelinedUnit


__all__ = ["FPSqrt"]


ROOT_BITS = PRECISION + 1           # significand and guard bit


class FPSqrt(PipelinedUnit):
    """Binary32 ``sqrt(a)``; latency :data:`LATENCY` cycles."""

    OPS = SqrtOp
    LATENCY = 2 + ROOT_BITS + 1

    def datapath(self, m, pipe, record):
        x = unpack(m, record.a, name="x")

        # Stage 1.
        s1 = pipe.register_stage("count_", {
            "special": x.nan | x.inf | x.zero | x.sign,
            "nan": x.nan | (x.sign & ~x.zero), "zero": x.zero, "sign": x.sign,
            "significand": x.significand, "exponent": x.exponent,
            "shift": leading_zeros(x.significand),
        })
        passed = ("special", "nan", "zero", "sign")

        # Stage 2. The parity of the unbiased exponent e - shift - BIAS decides whether
        # the significand is doubled so that the exponent halves exactly.
        significand = (s1["significand"] << s1["shift"])[:PRECISION]
        odd = ~(s1["exponent"][0] ^ s1["shift"][0])
        s2 = pipe.register_stage("normalized_", {
            # significand · 2^25, or · 2^26 for an odd exponent: the radicand's top bits.
            "radicand": Mux(odd, Cat(Const(0, 2), significand),
                                 Cat(Const(0, 1), significand, Const(0, 1))),
            "exponent": s1["exponent"], "shift": s1["shift"], "odd": odd,
            **{name: s1[name] for name in passed},
        })

        # Stages 3-27: one root bit each. After k steps the remainder is at most twice
        # the k-bit root, so k + 1 bits hold it. The root is kept inverted: with the
        # remainder r extended by two radicand bits to w bits, r - (4 root + 1) is
        # r + (2^w - 4 root - 1) = r + (~root · 4 + 3) on w bits, which carries out
        # exactly when the trial fits: the step adds, as the divider's do (a subtraction
        # per step took 5 % more LUTs on ECP5).
        remainder = Const(0, 0)
        inverted_root = Const(0, 0)
        radicand = s2["radicand"]
        stage = s2
        for step in range(ROOT_BITS):
            extended = Cat(radicand[-2:], remainder) if len(radicand) else \
                Cat(Const(0, 2), remainder)
            ones = len(extended) - 2 - len(inverted_root)
            total = extended + Cat(Const(0b11, 2), inverted_root, Const((1 << ones) - 1, ones))
            fits = total[len(extended)]
            values = {"remainder": Mux(fits, total, extended)[:step + 2],
                      "inverted_root": Cat(~fits, inverted_root),
                      **{name: stage[name] for name in passed}}
            if len(radicand) > 2:
                values["radicand"] = radicand[:-2]
            if step == 0:
                # The biased exponent of the root: (e - shift - BIAS - odd) / 2 + BIAS.
                values["exponent"] = ((stage["exponent"] - stage["shift"] + BIAS - stage["odd"])
                                      >> 1)
            else:
                values["exponent"] = stage["exponent"]
            stage = pipe.register_stage(f"step{step}_", values)
            remainder, inverted_root = stage["remainder"], stage["inverted_root"]
            radicand = stage["radicand"] if "radicand" in stage else Const(0, 0)

        # Stage 28.
        rounded = round_to_nearest_even(0, stage["exponent"], ~inverted_root, remainder != 0)
        special = pack_special_or_zero(stage["sign"], nan=stage["nan"], zero=stage["zero"])
        return pipe.register(Mux(stage["special"], special, rounded), "packed")
