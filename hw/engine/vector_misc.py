"""The single-cycle vector unit: FP32 minimum/maximum, comparisons, select, abs/neg,
32-bit integer lane arithmetic, and moves between scalar and vector registers.

FP lanes come from ``hw/fp`` (one lane group per kind); the integer lanes and the moves are
here. Every path takes one cycle. A new instruction is taken only while no result waits,
so at most one path holds a result and results leave in order.

With fewer units than lanes (``misc_units``) a vector passes them in ``lanes / misc_units``
groups of lanes, one group a cycle, as in the FMA lanes (:mod:`.lane_groups`): the
instruction is taken whole with its first group, each group's result waits in the same
one-cycle stage, and the groups are collected into the vector offered on the result
stream. The slot travels with each group, so no queue of slots is needed. ``vget`` reads
its lane from the whole vector in the first group; the later groups' lanes are zero.
"""

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream

from ..fp.compare import FPCompare
from ..fp.lanes import FPLanes, LanesConfig
from ..fp.minmax import FPMinMax
from ..fp.select import FPSelect
from ..fp.sign import FPSign
from ..fp.opcodes import CompareOp, MinMaxOp, SelectOp, SignOp
from .isa import Opcode
from .lane_groups import GroupCollect, GroupIssue
from .layouts import VectorUnit


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

    @property
    def passes(self):
        """Groups of lanes a vector passes the units in: the cycles between instructions
        that stream through."""
        return self.config.lanes // self.config.misc_units

    def elaborate(self, platform):
        m = Module()
        config = self.config
        request, result = self.request, self.result
        if self.passes == 1:
            def accept(room):
                m.d.comb += request.ready.eq(room)
                return request.valid & room
            self._lanes(m, request.payload,
                        lambda name: getattr(request.payload, name).as_value(), config.lanes,
                        result, accept)
            return m

        units = config.misc_units
        collect = GroupCollect(m, result, config, self.passes, units)
        issue = GroupIssue(m, request, self.passes, start_room=1)
        # The one-cycle stage's output: a group's value and its instruction's slot.
        stage = stream.Signature(data.StructLayout({
            "slot": unsigned(len(request.payload.slot)), "value": unsigned(32 * units),
        })).create()
        self._lanes(m, issue.current, lambda name: issue.lanes(name, units), units,
                    stage, issue.issue, first_group=issue.first)
        collect.collect(stage.valid & collect.room, stage.payload.value, stage.payload.slot)
        m.d.comb += stage.ready.eq(collect.room)
        return m

    def _lanes(self, m, request, lanes_of, lanes, result, accept, *, first_group=1):
        """The unit's paths on ``lanes`` lanes of the instruction ``request`` (its opcode,
        slot and ``x``; the lanes of its vectors are ``lanes_of(name)``), each with a
        one-cycle stage offering its value on ``result``. ``first_group``: the lanes are
        the vector's first group, whose instruction is the one offered (``vget`` reads its
        lane from the offered vector). ``accept(room)`` gives the condition of the
        instruction being taken, given the stages' room for it."""
        config = self.config
        opcode = request.opcode

        groups = {}
        for name, unit in _GROUPS.items():
            groups[name] = m.submodules[name] = FPLanes(LanesConfig(unit, lanes))

        # The integer and move path: one register stage of its own.
        integer_valid = Signal()
        integer_value = Signal(32 * lanes)
        slot = Signal.like(request.slot)
        waiting = integer_valid | Cat(*(group.result.valid for group in groups.values())).any()
        room = ~waiting | result.ready
        take = accept(room)

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
                group.operands.payload.a.eq(lanes_of("a")),
                group.operands.payload.b.eq(lanes_of("b")),
                group.operands.payload.c.eq(lanes_of("c")),
                group.operands.payload.op.as_value().eq(code_value),
                group.result.ready.eq(result.ready),
            ]

        fp_selected = 0
        for opcode_ in _FP_PATHS:
            fp_selected = fp_selected | (opcode == opcode_)
        value = Signal(32 * lanes)
        a_lanes, b_lanes = lanes_of("a"), lanes_of("b")
        for lane in range(lanes):
            a, b = a_lanes[32 * lane:32 * lane + 32], b_lanes[32 * lane:32 * lane + 32]
            lane_value = value[32 * lane:32 * lane + 32]
            amount = b[:5]
            with m.Switch(opcode):
                with m.Case(Opcode.VIADD):
                    m.d.comb += lane_value.eq(a + b)
                with m.Case(Opcode.VISUB):
                    m.d.comb += lane_value.eq(a - b)
                with m.Case(Opcode.VIAND):
                    m.d.comb += lane_value.eq(a & b)
                with m.Case(Opcode.VIOR):
                    m.d.comb += lane_value.eq(a | b)
                with m.Case(Opcode.VIXOR):
                    m.d.comb += lane_value.eq(a ^ b)
                with m.Case(Opcode.VISHL):
                    m.d.comb += lane_value.eq(a << amount)
                with m.Case(Opcode.VISHR):
                    m.d.comb += lane_value.eq(a >> amount)
                with m.Case(Opcode.VISRA):
                    m.d.comb += lane_value.eq(a.as_signed() >> amount)
                with m.Case(Opcode.VSPLAT):
                    m.d.comb += lane_value.eq(request.x[:32])
        all_lanes = config.lanes
        lane_bits = max(1, (all_lanes - 1).bit_length())
        with m.If((opcode == Opcode.VGET) & first_group):
            offered = self.request.payload
            m.d.comb += value.eq(offered.a[offered.x[:lane_bits] if all_lanes > 1 else 0])

        with m.If(room):
            m.d.sync += integer_valid.eq(take & ~fp_selected)
        with m.If(take):
            m.d.sync += [slot.eq(request.slot), integer_value.eq(value)]

        result_value = integer_value
        for group in groups.values():
            result_value = Mux(group.result.valid, group.result.payload, result_value)
        m.d.comb += [
            result.valid.eq(waiting),
            result.payload.slot.eq(slot),
            result.payload.value.eq(result_value),
        ]
