"""IEEE 754-2019 ``minimum`` and ``maximum`` of binary32 operands.

Unlike the older ``minNum``/``maxNum``, these propagate NaN (any NaN operand gives the
canonical quiet NaN 0x7FC00000) and order the zeros: −0 < +0, so that for non-NaN
operands the order is that of the encodings' sign and magnitude, one unsigned comparison
of the magnitudes.

Operations (:class:`~.opcodes.MinMaxOp`): ``MIN`` minimum(a, b), ``MAX`` maximum(a, b); only
the bit in which the two codes differ is decoded (:func:`~.opcodes.selects`).
Fully pipelined: one result per cycle, ``LATENCY`` cycles from operand to result.
"""

from amaranth.hdl import Mux

from .compare import ordered_below
from .float32 import CANONICAL_NAN, unpack
from .opcodes import MinMaxOp, selects
from .pipeline import PipelinedUnit


__all__ = ["FPMinMax"]


class FPMinMax(PipelinedUnit):
    """minimum and maximum; latency :data:`LATENCY` cycles."""

    OPS = MinMaxOp
    LATENCY = 1

    def datapath(self, m, pipe, record):
        a = unpack(m, record.a, name="a")
        b = unpack(m, record.b, name="b")

        # When neither lies below the other, a and b are the same encoding.
        a_below_b = ordered_below(record.a, record.b)
        take_a = Mux(selects(record.op, MinMaxOp.MAX), ~a_below_b, a_below_b)
        value = Mux(a.nan | b.nan, CANONICAL_NAN, Mux(take_a, record.a, record.b))
        return pipe.register(value, "value")
