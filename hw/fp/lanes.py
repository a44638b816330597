"""N lanes of one FP unit behind one stream, as the NDP engine's SIMD datapath uses them:
a vector of operands in, a vector of results out, one operation for all lanes.

The lanes take a vector together and hand their results over together. With pipelined
units the lanes run in lockstep anyway; with iterative units a lane that finishes early
holds its result until the slowest lane is done. This requires a unit's
``operands.ready`` not to depend combinationally on ``operands.valid`` (true of every
unit in this package), since a lane is offered a vector only when all lanes can take it.

The wrapper's parameters form a :class:`LanesConfig`, checked when it is built, before
any component exists.
"""

import dataclasses

from amaranth.hdl import Module, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .interface import WORD_BITS, check_op_enum


__all__ = ["LanesConfig", "lane_operand_layout", "FPLanesSignature", "FPLanes"]


@dataclasses.dataclass(frozen=True)
class LanesConfig:
    """``lanes`` instances of the FP unit class ``unit`` (a ``wiring.Component`` with
    :class:`~.interface.FPUnitSignature` and ``OPS``, constructed without arguments).

    Raises ValueError for a lane count that is not a positive integer, TypeError for a
    ``unit`` that is not an FP unit class."""
    unit: type
    lanes: int = 8

    def __post_init__(self):
        if isinstance(self.lanes, bool) or not isinstance(self.lanes, int) or self.lanes < 1:
            raise ValueError(f"lanes must be a positive integer, not {self.lanes!r}")
        if not (isinstance(self.unit, type) and issubclass(self.unit, wiring.Component)
                and hasattr(self.unit, "OPS")):
            raise TypeError(f"unit must be an FP unit class (a wiring.Component with OPS), "
                            f"not {self.unit!r}")


def lane_operand_layout(lanes, ops):
    """The vector record of ``lanes`` lanes of a unit whose codes are the enum ``ops``."""
    words = data.ArrayLayout(unsigned(WORD_BITS), lanes)
    return data.StructLayout({"a": words, "b": words, "c": words,
                              "op": check_op_enum(ops)})


class FPLanesSignature(wiring.Signature):
    """Seen from the lanes."""

    def __init__(self, lanes, ops):
        self.lanes = lanes
        self.ops = ops
        super().__init__({
            "operands": In(stream.Signature(lane_operand_layout(lanes, ops))),
            "result":   Out(stream.Signature(data.ArrayLayout(unsigned(WORD_BITS), lanes))),
        })

    def __eq__(self, other):
        return (isinstance(other, FPLanesSignature) and other.lanes == self.lanes
                and other.ops is self.ops)

    def __repr__(self):
        return f"FPLanesSignature({self.lanes}, {self.ops.__qualname__})"


class FPLanes(wiring.Component):
    """The lanes of ``config`` (a :class:`LanesConfig`).

    ``OPS`` and ``CYCLES_PER_RESULT`` are the unit's, and so is ``LATENCY`` when it has
    one."""

    def __init__(self, config):
        self.config = config
        self.OPS = config.unit.OPS
        self.CYCLES_PER_RESULT = config.unit.CYCLES_PER_RESULT
        if hasattr(config.unit, "LATENCY"):
            self.LATENCY = config.unit.LATENCY
        super().__init__(FPLanesSignature(config.lanes, config.unit.OPS))

    def elaborate(self, platform):
        m = Module()
        units = [self.config.unit() for _ in range(self.config.lanes)]
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
