"""N lanes of one FP unit behind one stream, as the NDP engine's SIMD datapath uses them:
a vector of operands in, a vector of results out, one operation for all lanes.

The lanes take a vector together and hand their results over together. With pipelined
units the lanes run in lockstep anyway; with iterative units a lane that finishes early
holds its result until the slowest lane is done. This requires a unit's
``operands.ready`` not to depend combinationally on ``operands.valid`` (true of every
unit in this package), since a lane is offered a vector only when all lanes can take it.
"""

from amaranth.hdl import Module, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out


__all__ = ["lane_operand_layout", "FPLanesSignature", "FPLanes"]


def lane_operand_layout(lanes):
    return data.StructLayout({
        "a":  data.ArrayLayout(unsigned(32), lanes),
        "b":  data.ArrayLayout(unsigned(32), lanes),
        "c":  data.ArrayLayout(unsigned(32), lanes),
        "op": unsigned(4),
    })


class FPLanesSignature(wiring.Signature):
    """Seen from the lanes."""

    def __init__(self, lanes):
        self.lanes = lanes
        super().__init__({
            "operands": In(stream.Signature(lane_operand_layout(lanes))),
            "result":   Out(stream.Signature(data.ArrayLayout(unsigned(32), lanes))),
        })

    def __eq__(self, other):
        return isinstance(other, FPLanesSignature) and other.lanes == self.lanes

    def __repr__(self):
        return f"FPLanesSignature({self.lanes})"


class FPLanes(wiring.Component):
    """``lanes`` instances of ``unit_class`` (an FP unit with ``FPUnitSignature``).

    ``LATENCY`` is the unit's, when it has one."""

    def __new__(cls, unit_class, lanes=8, **kwargs):
        # Checked before the object exists, so a refused lane count leaves no component
        # behind to be reported as never elaborated.
        if not isinstance(lanes, int) or lanes < 1:
            raise ValueError(f"lanes must be a positive integer, not {lanes!r}")
        return super().__new__(cls, unit_class, lanes, **kwargs)

    def __init__(self, unit_class, lanes=8):
        self.unit_class = unit_class
        self.lanes = lanes
        if hasattr(unit_class, "LATENCY"):
            self.LATENCY = unit_class.LATENCY
        super().__init__(FPLanesSignature(lanes))

    def elaborate(self, platform):
        m = Module()
        units = [self.unit_class() for _ in range(self.lanes)]
        for index, unit in enumerate(units):
            m.submodules[f"lane{index}"] = unit

        all_ready = 1
        all_valid = 1
        for unit in units:
            all_ready &= unit.operands.ready
            all_valid &= unit.result.valid
        m.d.comb += [
            self.operands.ready.eq(all_ready),
            self.result.valid.eq(all_valid),
        ]
        vector = self.operands.payload
        for index, unit in enumerate(units):
            m.d.comb += [
                unit.operands.valid.eq(self.operands.valid & all_ready),
                unit.operands.payload.a.eq(vector.a[index]),
                unit.operands.payload.b.eq(vector.b[index]),
                unit.operands.payload.c.eq(vector.c[index]),
                unit.operands.payload.op.eq(vector.op),
                unit.result.ready.eq(self.result.ready & all_valid),
                self.result.payload[index].eq(unit.result.payload),
            ]
        return m
