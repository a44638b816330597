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
"""

from amaranth.hdl import Cat, Module, Mux
from amaranth.lib.fifo import SyncFIFO

from ..fp.fma import FPFusedMultiplyAdd
from ..fp.lanes import FPLanes, LanesConfig
from ..fp.opcodes import FusedMultiplyAddOp
from .isa import Opcode
from .layouts import VectorUnit


__all__ = ["FMALanes"]


_ONE = 0x3F80_0000
_NEGATIVE_ZERO = 0x8000_0000


def _negated(word):
    return Cat(word[:31], ~word[31])


class FMALanes(VectorUnit):
    LATENCY = FPFusedMultiplyAdd.LATENCY

    def elaborate(self, platform):
        m = Module()
        lanes = self.config.lanes
        request = self.request.payload
        m.submodules.lanes = fma = FPLanes(LanesConfig(FPFusedMultiplyAdd, lanes))
        m.submodules.slots = slots = SyncFIFO(width=len(request.slot), depth=self.LATENCY + 2)

        opcode = request.opcode
        for lane in range(lanes):
            a, b, c = request.a[lane], request.b[lane], request.c[lane]
            one_times = (opcode == Opcode.VADD) | (opcode == Opcode.VSUB)
            m.d.comb += [
                fma.operands.payload.a[lane].eq(Mux(opcode == Opcode.VFNMA, _negated(a), a)),
                fma.operands.payload.b[lane].eq(Mux(one_times, _ONE, b)),
                fma.operands.payload.c[lane].eq(
                    Mux(opcode == Opcode.VADD, b,
                        Mux(opcode == Opcode.VSUB, _negated(b),
                            Mux(opcode == Opcode.VMUL, _NEGATIVE_ZERO,
                                Mux(opcode == Opcode.VFMS, _negated(c), c))))),
            ]
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
