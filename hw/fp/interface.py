"""The stream interface every FP unit shares, so that testbenches, the lane wrapper and the
NDP engine drive all units the same way.

A unit takes one operand record per transfer on ``operands`` and produces one result per
record on ``result``, in order. The record's ``op`` field, typed by the unit's enum of
hw/fp/opcodes.py, selects among the operations the unit implements. Pipelined units
accept one record per cycle and stall as a whole while ``result`` is not ready; iterative
units hold ``operands.ready`` low while busy.

Besides the signature, every unit class states its enum as ``OPS`` and its throughput as
``CYCLES_PER_RESULT`` (1 for pipelined units, which also state ``LATENCY``).
"""

from amaranth.hdl import Shape, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from .opcodes import OP_BITS


__all__ = ["WORD_BITS", "check_op_enum", "operand_layout", "FPUnitSignature"]


WORD_BITS = 32


def check_op_enum(ops):
    """``ops`` if it can type the op field (an enum of hw/fp/opcodes.py's shape), else
    TypeError."""
    if not (isinstance(ops, enum.EnumType) and Shape.cast(ops) == unsigned(OP_BITS)):
        raise TypeError(f"the op field must be typed by an amaranth.lib.enum of shape "
                        f"unsigned({OP_BITS}) (hw/fp/opcodes.py), not {ops!r}")
    return ops


def operand_layout(ops):
    """The operand record of a unit whose codes are the enum ``ops``."""
    return data.StructLayout({
        "a":  unsigned(WORD_BITS),
        "b":  unsigned(WORD_BITS),
        "c":  unsigned(WORD_BITS),
        "op": check_op_enum(ops),
    })


class FPUnitSignature(wiring.Signature):
    """Seen from the unit whose codes are the enum ``ops``."""

    def __init__(self, ops):
        self.ops = check_op_enum(ops)
        super().__init__({
            "operands": In(stream.Signature(operand_layout(ops))),
            "result":   Out(stream.Signature(unsigned(WORD_BITS))),
        })

    def __eq__(self, other):
        return isinstance(other, FPUnitSignature) and other.ops is self.ops

    def __repr__(self):
        return f"FPUnitSignature({self.ops.__qualname__})"
