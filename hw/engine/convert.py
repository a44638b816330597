"""BF16 <-> FP32 for vectors: a sector holds ``lanes`` FP32 or ``2 × lanes`` BF16 elements.

BF16 element ``j`` of a vector is bits ``16 j + 15 … 16 j`` (so lane ``j // 2``, the low half
for even ``j``). ``vcvtlo`` widens elements ``0 … lanes − 1`` into the lanes, ``vcvthi``
elements ``lanes … 2 lanes − 1``; ``vpackbf`` rounds ``a`` into elements ``0 … lanes − 1``
and ``b`` into the rest. Both directions use the conversion lanes of ``hw/fp``
(round to nearest even, canonical NaNs); one cycle.
"""

from amaranth.hdl import Cat, Module, Mux, Signal

from ..fp.convert import FPConvert
from ..fp.lanes import FPLanes, LanesConfig
from ..fp.opcodes import ConvertOp
from .isa import Opcode
from .layouts import VectorUnit


__all__ = ["VectorConvert"]


class VectorConvert(VectorUnit):
    LATENCY = FPConvert.LATENCY

    def elaborate(self, platform):
        m = Module()
        lanes = self.config.lanes
        request = self.request.payload
        # Twice the lanes: a narrowing converts a and b, a widening uses the first half.
        m.submodules.lanes = convert = FPLanes(LanesConfig(FPConvert, 2 * lanes))

        widening = request.opcode != Opcode.VPACKBF
        high = request.opcode == Opcode.VCVTHI
        bf16 = [request.a.as_value()[16 * element:16 * element + 16] for element in range(2 * lanes)]
        for lane in range(2 * lanes):
            if lane < lanes:
                element = Mux(high, bf16[lanes + lane], bf16[lane])
                narrow_source = request.a[lane]
            else:
                element = 0
                narrow_source = request.b[lane - lanes]
            m.d.comb += convert.operands.payload.a[lane].eq(Mux(widening, element, narrow_source))
        m.d.comb += [
            convert.operands.payload.op.as_value().eq(
                Mux(widening, ConvertOp.BF16_TO_F32.value, ConvertOp.F32_TO_BF16.value)),
            convert.operands.valid.eq(self.request.valid),
            self.request.ready.eq(convert.operands.ready),
        ]

        # The conversion lanes take one cycle: the slot and the direction wait beside them.
        slot_register = Signal.like(request.slot)
        widened = Signal()
        with m.If(convert.operands.ready):
            m.d.sync += [slot_register.eq(request.slot), widened.eq(widening)]
        results = convert.result.payload
        packed = Cat(*(results[element][:16] for element in range(2 * lanes)))
        wide = Cat(*(results[lane] for lane in range(lanes)))
        m.d.comb += [
            self.result.valid.eq(convert.result.valid),
            self.result.payload.slot.eq(slot_register),
            self.result.payload.value.eq(Mux(widened, wide, packed)),
            convert.result.ready.eq(self.result.ready),
        ]
        return m
