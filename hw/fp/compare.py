"""IEEE-754 binary32 comparisons producing a lane mask bit.

Operations (:class:`~.opcodes.CompareOp`): ``EQ`` a == b, ``LT`` a < b, ``LE`` a <= b;
any other value of the ``op`` field gives false.
The result word is 1 when the relation holds and 0 otherwise (the mask bit that
:class:`~hw.fp.select.FPSelect` reads from bit 0 of its ``c`` operand). These are IEEE
754's quiet predicates: a NaN operand makes every relation false, and +0 == −0.

Fully pipelined: one result per cycle, ``LATENCY`` cycles from operand to result.
"""

from amaranth.hdl import Mux

from .float32 import unpack
from .opcodes import CompareOp
from .pipeline import PipelinedUnit


__all__ = ["FPCompare", "ordered_below"]


def ordered_below(a, b):
    """Whether binary32 encoding ``a`` lies below ``b`` in numeric order, with −0 below +0
    (valid when neither is a NaN). Opposite signs decide alone; otherwise one unsigned
    comparison of the magnitudes decides, reversed for negative operands."""
    magnitude_below = a[0:31] < b[0:31]
    magnitude_equal = a[0:31] == b[0:31]
    return Mux(a[31] != b[31], a[31],
               Mux(a[31], ~magnitude_below & ~magnitude_equal, magnitude_below))


class FPCompare(PipelinedUnit):
    """``a == b``, ``a < b``, ``a <= b`` as a 1/0 word; latency :data:`LATENCY` cycles."""

    OPS = CompareOp
    LATENCY = 1

    def datapath(self, m, pipe, record):
        a = unpack(m, record.a, name="a")
        b = unpack(m, record.b, name="b")

        ordered = ~a.nan & ~b.nan
        both_zero = a.zero & b.zero
        equal = ordered & ((record.a == record.b) | both_zero)
        less = ordered & ~both_zero & ordered_below(record.a, record.b)
        holds = Mux(record.op == CompareOp.EQ, equal,
                Mux(record.op == CompareOp.LT, less,
                Mux(record.op == CompareOp.LE, less | equal, 0)))
        return pipe.register(holds, "holds")
