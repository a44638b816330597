"""Sign-bit operations on binary32 (:class:`~.opcodes.SignOp`): ``ABS`` abs(a), ``NEG`` -a;
only the bit in which the two codes differ is decoded (:func:`~.opcodes.selects`).

IEEE 754 defines abs and negate as quiet bit operations that flip or clear the sign even
of a NaN. This unit instead returns the canonical quiet NaN 0x7FC00000 for a NaN operand,
so that the engine keeps one rule for every arithmetic instruction: each NaN it computes
is 0x7FC00000. A kernel's output can then be compared bit for bit with a reference that
canonicalizes NaNs, and no "negative NaN" appears in memory that a later bitwise test or
the GPU could tell apart. Only the NaN's sign and payload are lost, which the engine's
arithmetic units do not keep either; for every non-NaN operand (±0, subnormals, ±inf)
the result is the IEEE one. Data moves that must keep bits exactly use
:class:`~hw.fp.select.FPSelect`.

Fully pipelined: one result per cycle, ``LATENCY`` cycles from operand to result.
"""

from amaranth.hdl import Mux, Cat

from .float32 import CANONICAL_NAN, unpack
from .opcodes import SignOp, selects
from .pipeline import PipelinedUnit


__all__ = ["FPSign"]


class FPSign(PipelinedUnit):
    """abs and neg; latency :data:`LATENCY` cycles."""

    OPS = SignOp
    LATENCY = 1

    def datapath(self, m, pipe, record):
        a = unpack(m, record.a, name="a")
        sign = Mux(selects(record.op, SignOp.NEG), ~record.a[31], 0)
        value = Mux(a.nan, CANONICAL_NAN, Cat(record.a[0:31], sign))
        return pipe.register(value, "value")
