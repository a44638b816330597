"""Horizontal reductions, ``vredsum`` and ``vredmax``, in the ISA's pairwise tree order,
on one adder and one maximum unit: the reduce unit of an engine without the tree
(``EngineConfig.reduce_tree`` False; :mod:`.reduce` has the tree and the choice).

Level 0 combines lanes (0, 1), (2, 3), …; each later level combines the previous level's
results the same way, until one value is left, which every lane of the result receives.
One pipelined adder (or maximum unit) does all the work: the pairs of a level issue back
to back, and each result overwrites the lane its pair's first operand came from once that
pair has been read, so the tree needs no second buffer. One instruction at a time, about
30 cycles each at eight lanes, where the tree takes one a cycle: a seventh of its
logic (docs/engine.md, "Named configurations").
"""

from amaranth.hdl import Cat, Module, Mux, Signal

from ..fp.addsub import FPAddSub
from ..fp.minmax import FPMinMax
from ..fp.opcodes import AddSubOp, MinMaxOp
from .isa import Opcode
from .layouts import VectorUnit, vector_layout


__all__ = ["SerialReduce"]


class SerialReduce(VectorUnit):
    def cycles_per_instruction(self, opcode):
        latency = FPAddSub.LATENCY if opcode == Opcode.VREDSUM else FPMinMax.LATENCY
        levels = (self.config.lanes - 1).bit_length()
        return self.config.lanes - 1 + levels * (latency + 1) + 2

    def elaborate(self, platform):
        m = Module()
        lanes = self.config.lanes
        vector = vector_layout(self.config)
        m.submodules.adder = adder = FPAddSub()
        m.submodules.maximum = maximum = FPMinMax()

        slot = Signal.like(self.request.payload.slot)
        summing = Signal()
        values = Signal(vector)
        pairs = Signal(range(lanes + 1))         # pairs in the current level
        issued = Signal(range(lanes + 1))
        received = Signal(range(lanes + 1))

        def word(index):
            return values.as_value().word_select(index, 32)

        for unit, code in ((adder, AddSubOp.ADD), (maximum, MinMaxOp.MAX)):
            m.d.comb += [
                unit.operands.payload.a.eq(word((2 * issued)[:len(issued)])),
                unit.operands.payload.b.eq(word((2 * issued + 1)[:len(issued)])),
                unit.operands.payload.op.eq(code),
            ]
        result_valid = Mux(summing, adder.result.valid, maximum.result.valid)
        result_value = Mux(summing, adder.result.payload, maximum.result.payload)
        m.d.comb += [self.result.payload.slot.eq(slot),
                     self.result.payload.value.eq(Cat(*(word(0) for _ in range(lanes))))]

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.request.ready.eq(1)
                with m.If(self.request.valid):
                    m.d.sync += [slot.eq(self.request.payload.slot),
                                 summing.eq(self.request.payload.opcode == Opcode.VREDSUM),
                                 values.eq(self.request.payload.a),
                                 pairs.eq(lanes // 2), issued.eq(0), received.eq(0)]
                    m.next = "LEVEL" if lanes > 1 else "DONE"
            with m.State("LEVEL"):
                offer = issued < pairs
                m.d.comb += [adder.operands.valid.eq(offer & summing),
                             maximum.operands.valid.eq(offer & ~summing),
                             adder.result.ready.eq(summing), maximum.result.ready.eq(~summing)]
                taken = offer & Mux(summing, adder.operands.ready, maximum.operands.ready)
                with m.If(taken):
                    m.d.sync += issued.eq(issued + 1)
                with m.If(result_valid):
                    m.d.sync += [values.as_value().word_select(received, 32).eq(result_value),
                                 received.eq(received + 1)]
                    with m.If(received == pairs - 1):
                        with m.If(pairs == 1):
                            m.next = "DONE"
                        with m.Else():
                            m.d.sync += [pairs.eq(pairs >> 1), issued.eq(0), received.eq(0)]
            with m.State("DONE"):
                m.d.comb += self.result.valid.eq(1)
                with m.If(self.result.ready):
                    m.next = "IDLE"
        return m
