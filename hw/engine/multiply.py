"""Scalar multiply and division by a constant, pipelined: ``mul``, ``divc``, ``remc``.

``mul`` is the 64-bit product of the operands' low 32 bits. ``divc``/``remc`` divide the
low 32 bits of ``a`` by a constant d described by ``b`` (:data:`~.isa.DIVISOR_LAYOUT`): the
quotient is ``(a × multiplier) >> shift``, exact for the dividends the runtime
checked when it built the descriptor, and the remainder ``a − quotient × d``. Three stages,
one result per cycle; the pipeline holds as a whole while its result is not taken.
"""

from amaranth.hdl import Module, Mux
from amaranth.lib import data

from ..fp.pipeline import Pipeline
from .isa import DIVISOR_LAYOUT, Opcode
from .layouts import ScalarUnit


__all__ = ["Multiply"]


class Multiply(ScalarUnit):
    LATENCY = 3

    def elaborate(self, platform):
        m = Module()
        request = self.request.payload
        pipe = Pipeline(m, self.request, self.result, self.LATENCY)

        divisor = data.View(DIVISOR_LAYOUT, request.b)
        by_constant = request.opcode != Opcode.MUL
        s1 = pipe.register_stage("s1_", {
            "slot": request.slot,
            "product": request.a[:32] * Mux(by_constant, divisor.multiplier, request.b[:32]),
            "dividend": request.a[:32],
            "shift": divisor.shift,
            "divisor": divisor.divisor,
            "opcode": request.opcode,
        })
        quotient = s1["product"] >> s1["shift"]
        s2 = pipe.register_stage("s2_", {
            "slot": s1["slot"],
            "product": s1["product"],
            "quotient": quotient[:32],
            "dividend": s1["dividend"],
            "divisor": s1["divisor"],
            "opcode": s1["opcode"],
        })
        remainder = (s2["dividend"] - s2["quotient"] * s2["divisor"])[:32]
        value = Mux(s2["opcode"] == Opcode.MUL, s2["product"],
                    Mux(s2["opcode"] == Opcode.DIVC, s2["quotient"], remainder))
        m.d.comb += [
            self.result.payload.slot.eq(pipe.register(s2["slot"], "s3_slot")),
            self.result.payload.value.eq(pipe.register(value, "s3_value")),
        ]
        return m
