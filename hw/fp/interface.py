"""The stream interface every FP unit shares, so that testbenches, the lane wrapper and the
NDP engine drive all units the same way.

A unit takes one operand record per transfer on ``operands`` and produces one result per
record on ``result``, in order. ``op`` selects among the operations a unit implements
(each unit documents its codes). Pipelined units accept one record per cycle and stall as
a whole while ``result`` is not ready; iterative units hold ``operands.ready`` low while
busy.
"""

from amaranth.hdl import unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out


__all__ = ["operand_layout", "FPUnitSignature"]


operand_layout = data.StructLayout({
    "a":  unsigned(32),
    "b":  unsigned(32),
    "c":  unsigned(32),
    "op": unsigned(4),
})


class FPUnitSignature(wiring.Signature):
    """Seen from the unit."""

    def __init__(self):
        super().__init__({
            "operands": In(stream.Signature(operand_layout)),
            "result":   Out(stream.Signature(unsigned(32))),
        })

    def __eq__(self, other):
        return isinstance(other, FPUnitSignature)

    def __repr__(self):
        return "FPUnitSignature()"
