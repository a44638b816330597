"""The single-cycle vector unit: FP32 minimum/maximum, comparisons, select, abs/neg,
32-bit integer lane arithmetic, and moves between scalar and vector registers.

FP lanes come from ``hw/fp`` (one lane group per kind); the integer lanes and the moves are
here. Every path takes one cycle. A new instruction is taken only while no result waits,
so at most one path holds a result and results leave in order.
"""

from amaranth.hdl import Cat, Module, Mux, Signal

from ..fp.compare import FPCompare
from ..fp.lanes import FPLanes, LanesConfig
from ..fp.minmax import FPMinMax
from ..fp.select import FPSelect
from ..fp.sign import FPSign
from ..fp.opcodes import CompareOp, MinMaxOp, SelectOp, SignOp
from .isa import Opcode
from .layouts import VectorUnit, vector_layout


__all__ = ["VectorMisc"]


# opcode -> (lane group, that group's operation code)
_FP_PATHS = {
    Opcode.VMIN: ("minmax", MinMaxOp.MIN),
    Opcode.VMAX: ("minmax", MinMaxOp.MAX),
    Opcode.VCMPEQ: ("compare", CompareOp.EQ),
    Opcode.VCMPLT: ("compare", CompareOp.LT),
    Opcode.VCMPLE: ("compare", CompareOp.LE),
    Opcode.VSEL: ("select", SelectOp.SELECT),
    Opcode.VABS: ("sign", SignOp.ABS),
    Opcode.VNEG: ("sign", SignOp.NEG),
}
_GROUPS = {"minmax": FPMinMax, "compare": FPCompare, "select": FPSelect, "sign": FPSign}


class VectorMisc(VectorUnit):
    LATENCY = 1

    def elaborate(self, platform):
        m = Module()
        config = self.config
        lanes = config.lanes
        request = self.request.payload
        opcode = request.opcode

        groups = {}
        for name, unit in _GROUPS.items():
            groups[name] = m.submodules[name] = FPLanes(LanesConfig(unit, lanes))

        # The integer and move path: one register stage of its own.
        integer_valid = Signal()
        integer_value = Signal(vector_layout(config))
        slot = Signal.like(request.slot)
        waiting = integer_valid | Cat(*(group.result.valid for group in groups.values())).any()
        take = self.request.valid & (~waiting | self.result.ready)
        m.d.comb += self.request.ready.eq(~waiting | self.result.ready)

        for name, group in groups.items():
            codes = [(opcode_, code) for opcode_, (group_name, code) in _FP_PATHS.items()
                     if group_name == name]
            selected = 0
            code_value = 0
            for opcode_, code in codes:
                selected = selected | (opcode == opcode_)
                code_value = Mux(opcode == opcode_, code.value, code_value)
            m.d.comb += [
                group.operands.valid.eq(take & selected),
                group.operands.payload.a.eq(request.a),
                group.operands.payload.b.eq(request.b),
                group.operands.payload.c.eq(request.c),
                group.operands.payload.op.as_value().eq(code_value),
                group.result.ready.eq(self.result.ready),
            ]

        fp_selected = 0
        for opcode_ in _FP_PATHS:
            fp_selected = fp_selected | (opcode == opcode_)
        value = Signal(vector_layout(config))
        for lane in range(lanes):
            a, b = request.a[lane], request.b[lane]
            amount = b[:5]
            with m.Switch(opcode):
                with m.Case(Opcode.VIADD):
                    m.d.comb += value[lane].eq(a + b)
                with m.Case(Opcode.VISUB):
                    m.d.comb += value[lane].eq(a - b)
                with m.Case(Opcode.VIAND):
                    m.d.comb += value[lane].eq(a & b)
                with m.Case(Opcode.VIOR):
                    m.d.comb += value[lane].eq(a | b)
                with m.Case(Opcode.VIXOR):
                    m.d.comb += value[lane].eq(a ^ b)
                with m.Case(Opcode.VISHL):
                    m.d.comb += value[lane].eq(a << amount)
                with m.Case(Opcode.VISHR):
                    m.d.comb += value[lane].eq(a >> amount)
                with m.Case(Opcode.VISRA):
                    m.d.comb += value[lane].eq(a.as_signed() >> amount)
                with m.Case(Opcode.VSPLAT):
                    m.d.comb += value[lane].eq(request.x[:32])
        lane_bits = max(1, (lanes - 1).bit_length())
        with m.If(opcode == Opcode.VGET):
            m.d.comb += value.eq(request.a[request.x[:lane_bits] if lanes > 1 else 0])

        with m.If(self.result.ready | ~waiting):
            m.d.sync += integer_valid.eq(take & ~fp_selected)
        with m.If(take):
            m.d.sync += [slot.eq(request.slot), integer_value.eq(value)]

        result_value = integer_value
        for group in groups.values():
            result_value = Mux(group.result.valid, group.result.payload, result_value)
        m.d.comb += [
            self.result.valid.eq(waiting),
            self.result.payload.slot.eq(slot),
            self.result.payload.value.eq(result_value),
        ]
        return m
