"""Vector divide, square root and reciprocal square root on shared iterative units.

``divide_units`` dividers and as many square-root units serve the lanes: a vector takes
``lanes / divide_units`` passes, each pass one group of lanes through every unit at once.
``vrsqrt`` is ``1 ÷ √a`` with both steps correctly rounded: the square-root passes first,
then division passes of 1.0 by their results. One instruction at a time; the unit is not
ready while it works, so the sub-core replays other instructions for it.
"""

from amaranth.hdl import Cat, Module, Mux, Signal

from ..fp.divide import FPDivide
from ..fp.sqrt import FPSqrt
from .isa import Opcode
from .layouts import VectorUnit, vector_layout


__all__ = ["VectorDivide"]


_ONE = 0x3F80_0000


class VectorDivide(VectorUnit):
    @property
    def passes(self):
        return self.config.lanes // self.config.divide_units

    def cycles_per_instruction(self, opcode):
        """Cycles from taking an instruction to offering its result, with results taken at once
        (for the engine's bounds)."""
        divide = self.passes * (FPDivide.CYCLES_PER_RESULT + 2)
        root = self.passes * (FPSqrt.CYCLES_PER_RESULT + 2)
        return {Opcode.VDIV: divide, Opcode.VSQRT: root, Opcode.VRSQRT: divide + root}[opcode] + 2

    def elaborate(self, platform):
        m = Module()
        config = self.config
        units = config.divide_units
        passes = self.passes
        vector = vector_layout(config)

        dividers = [FPDivide() for _ in range(units)]
        roots = [FPSqrt() for _ in range(units)]
        for index, (divider, root) in enumerate(zip(dividers, roots)):
            m.submodules[f"divider{index}"] = divider
            m.submodules[f"root{index}"] = root

        slot = Signal.like(self.request.payload.slot)
        opcode = Signal.like(self.request.payload.opcode)
        a = Signal(vector)
        b = Signal(vector)
        result = Signal(vector)
        group = Signal(range(max(2, passes)))
        rooting = Signal()            # the pass in progress is a square-root pass
        got = Signal(units)

        def lane(vector_signal, unit):
            return vector_signal.as_value().word_select(group * units + unit, 32)

        m.d.comb += [self.result.payload.slot.eq(slot), self.result.payload.value.eq(result)]
        # The operands of the group in progress, offered to the units whenever they issue.
        reciprocal = opcode == Opcode.VRSQRT
        for unit, (divider, root) in enumerate(zip(dividers, roots)):
            m.d.comb += [
                root.operands.payload.as_value().eq(lane(a, unit)),
                divider.operands.payload.as_value().eq(Cat(
                    Mux(reciprocal, _ONE, lane(a, unit)),
                    Mux(reciprocal, lane(result, unit), lane(b, unit)))),
            ]
        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.request.ready.eq(1)
                with m.If(self.request.valid):
                    request = self.request.payload
                    m.d.sync += [slot.eq(request.slot), opcode.eq(request.opcode),
                                 a.eq(request.a), b.eq(request.b), group.eq(0),
                                 rooting.eq(request.opcode != Opcode.VDIV)]
                    m.next = "ISSUE"
            with m.State("ISSUE"):
                # Every unit is idle here, so all take their operands in this cycle.
                for divider, root in zip(dividers, roots):
                    m.d.comb += [root.operands.valid.eq(rooting),
                                 divider.operands.valid.eq(~rooting)]
                m.d.sync += got.eq(0)
                m.next = "WAIT"
            with m.State("WAIT"):
                collected = Signal(units)
                for unit, (divider, root) in enumerate(zip(dividers, roots)):
                    valid = Mux(rooting, root.result.valid, divider.result.valid)
                    m.d.comb += [root.result.ready.eq(rooting),
                                 divider.result.ready.eq(~rooting),
                                 collected[unit].eq(got[unit] | valid)]
                    with m.If(valid):
                        m.d.sync += result.as_value().word_select(group * units + unit, 32).eq(
                            Mux(rooting, root.result.payload, divider.result.payload))
                m.d.sync += got.eq(collected)
                with m.If(collected.all()):
                    with m.If(group != passes - 1):
                        m.d.sync += group.eq(group + 1)
                        m.next = "ISSUE"
                    with m.Elif(rooting & (opcode == Opcode.VRSQRT)):
                        m.d.sync += [group.eq(0), rooting.eq(0)]
                        m.next = "ISSUE"
                    with m.Else():
                        m.next = "DONE"
            with m.State("DONE"):
                m.d.comb += self.result.valid.eq(1)
                with m.If(self.result.ready):
                    m.next = "IDLE"
        return m
