"""The scalar integer ALU: 64-bit add, subtract, logic, shifts and comparisons in one
cycle (a registered result, so the sub-core's dispatch stage ends in a flop)."""

from amaranth.hdl import Module, Signal

from ..fp.pipeline import Pipeline
from .isa import Opcode
from .layouts import SCALAR_BITS, ScalarUnit


__all__ = ["ALU"]


class ALU(ScalarUnit):
    LATENCY = 1

    def elaborate(self, platform):
        m = Module()
        request = self.request.payload
        pipe = Pipeline(m, self.request, self.result, self.LATENCY)
        a, b = request.a, request.b
        amount = b[:6]
        value = Signal(SCALAR_BITS)
        with m.Switch(request.opcode):
            with m.Case(Opcode.ADD):
                m.d.comb += value.eq(a + b)
            with m.Case(Opcode.SUB):
                m.d.comb += value.eq(a - b)
            with m.Case(Opcode.AND):
                m.d.comb += value.eq(a & b)
            with m.Case(Opcode.OR):
                m.d.comb += value.eq(a | b)
            with m.Case(Opcode.XOR):
                m.d.comb += value.eq(a ^ b)
            with m.Case(Opcode.SHL):
                m.d.comb += value.eq(a << amount)
            with m.Case(Opcode.SHR):
                m.d.comb += value.eq(a >> amount)
            with m.Case(Opcode.SRA):
                m.d.comb += value.eq(a.as_signed() >> amount)
            with m.Case(Opcode.SLT):
                m.d.comb += value.eq(a.as_signed() < b.as_signed())
            with m.Case(Opcode.SLTU):
                m.d.comb += value.eq(a < b)
        m.d.comb += [
            self.result.payload.slot.eq(pipe.register(request.slot, "result_slot")),
            self.result.payload.value.eq(pipe.register(value, "result_value")),
        ]
        return m
