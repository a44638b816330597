"""The vector FMA unit: one fused multiply-add per lane, fully pipelined.

Every FMA-class instruction is one fused operation with the operands arranged so that the
single rounding gives exactly the IEEE result of the named operation:

=========  ===================  ==========================================================
vadd       a × 1 + b            a × 1 is exact, so one rounding of the sum
vsub       a × 1 + (−b)
vmul       a × b + (−0)         adding −0 changes no product, and keeps a product of +0 at +0
vfma       a × b + c
vfms       a × b + (−c)
vfnma      (−a) × b + c
=========  ===================  ==========================================================

Sign flips are on the encoding (the sign bit), which also turns a NaN into a NaN, and
every NaN result is the canonical one anyway. The slot travels beside the pipeline in a
queue as deep as the pipeline, since the lanes return results in order.

With fewer FMA units than lanes (``fma_units``) a vector passes the units in
``lanes / fma_units`` groups of lanes, one group a cycle, the next instruction's groups
following at once. As in the divide unit (:mod:`.divide`), an instruction is taken whole
with its first group and its other groups are issued from a copy, since DISPATCH offers an
instruction for one cycle only (:mod:`.lane_groups`); the groups leaving the units are
collected into a register and the whole vector is offered when its last group is in.
"""

from amaranth.hdl import Cat, Module, Mux
from amaranth.lib.fifo import SyncFIFO

from ..fp.fma import FPFusedMultiplyAdd
from ..fp.lanes import FPLanes, LanesConfig
from ..fp.opcodes import FusedMultiplyAddOp
from .isa import Opcode
from .lane_groups import GroupCollect, GroupIssue
from .layouts import VectorUnit


__all__ = ["FMALanes"]


_ONE = 0x3F80_0000
_NEGATIVE_ZERO = 0x8000_0000


def _negated(word):
    return Cat(word[:31], ~word[31])


def _fused_operands(opcode, a, b, c):
    """The FMA unit's operands ``(a, b, c)`` of one lane for the FMA-class ``opcode``."""
    one_times = (opcode == Opcode.VADD) | (opcode == Opcode.VSUB)
    return (Mux(opcode == Opcode.VFNMA, _negated(a), a),
            Mux(one_times, _ONE, b),
            Mux(opcode == Opcode.VADD, b,
                Mux(opcode == Opcode.VSUB, _negated(b),
                    Mux(opcode == Opcode.VMUL, _NEGATIVE_ZERO,
                        Mux(opcode == Opcode.VFMS, _negated(c), c)))))


class FMALanes(VectorUnit):
    LATENCY = FPFusedMultiplyAdd.LATENCY

    @property
    def passes(self):
        """Groups of lanes a vector passes the FMA units in: the cycles between
        instructions that stream through."""
        return self.config.lanes // self.config.fma_units

    def elaborate(self, platform):
        return self._elaborate_grouped() if self.passes > 1 else self._elaborate_per_lane()

    def _elaborate_per_lane(self):
        m = Module()
        lanes = self.config.lanes
        request = self.request.payload
        m.submodules.lanes = fma = FPLanes(LanesConfig(FPFusedMultiplyAdd, lanes))
        m.submodules.slots = slots = SyncFIFO(width=len(request.slot), depth=self.LATENCY + 2)

        for lane in range(lanes):
            operands = _fused_operands(request.opcode, request.a[lane], request.b[lane],
                                       request.c[lane])
            for name, value in zip("abc", operands):
                m.d.comb += getattr(fma.operands.payload, name)[lane].eq(value)
        accept = self.request.valid & fma.operands.ready & slots.w_rdy
        m.d.comb += [
            fma.operands.payload.op.eq(FusedMultiplyAddOp.FMA),
            fma.operands.valid.eq(self.request.valid & slots.w_rdy),
            self.request.ready.eq(fma.operands.ready & slots.w_rdy),
            slots.w_data.eq(request.slot),
            slots.w_en.eq(accept),
            self.result.valid.eq(fma.result.valid),
            self.result.payload.value.eq(fma.result.payload),
            self.result.payload.slot.eq(slots.r_data),
            fma.result.ready.eq(self.result.ready),
            slots.r_en.eq(fma.result.valid & self.result.ready),
        ]
        return m

    def _elaborate_grouped(self):
        m = Module()
        config = self.config
        units = config.fma_units
        passes = self.passes
        request, result = self.request, self.result
        m.submodules.lanes = fma = FPLanes(LanesConfig(FPFusedMultiplyAdd, units))
        # A slot per instruction in flight: the pipeline holds LATENCY groups, one more
        # instruction is being collected or offered, and a full queue takes no slot in the
        # cycle it gives one.
        m.submodules.slots = slots = SyncFIFO(width=len(request.payload.slot),
                                              depth=-(-self.LATENCY // passes) + 2)

        # Issue: the groups of the instruction, one a cycle.
        issue = GroupIssue(m, request, passes, start_room=slots.w_rdy)
        current = issue.current
        issued = issue.issue(fma.operands.ready)
        for lane in range(units):
            operands = _fused_operands(current.opcode,
                                       *(issue.word(name, lane, units) for name in "abc"))
            for name, value in zip("abc", operands):
                m.d.comb += getattr(fma.operands.payload, name)[lane].eq(value)
        m.d.comb += [
            fma.operands.payload.op.eq(FusedMultiplyAddOp.FMA),
            fma.operands.valid.eq(issue.offered),
            slots.w_en.eq(issued & issue.first),
            slots.w_data.eq(current.slot),
        ]

        # Collect: the groups of the oldest instruction, in order.
        collect = GroupCollect(m, result, config, passes, units)
        take = collect.room & fma.result.valid
        m.d.comb += [
            fma.result.ready.eq(collect.room),
            slots.r_en.eq(take & collect.finished),
        ]
        collect.collect(take, fma.result.payload, slots.r_data)
        return m
