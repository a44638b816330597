"""Lane select: ``a`` where the mask bit is set, ``b`` elsewhere.

The mask bit is bit 0 of ``c``, which is exactly the word :class:`~hw.fp.compare.FPCompare`
writes (1 = relation holds, 0 = not), so ``select(a, b, lt(x, y))`` needs no conversion.
The other 31 bits of ``c`` and the ``op`` field are ignored (one operation,
:class:`~.opcodes.SelectOp` ``SELECT``). The chosen operand passes
bit for bit, NaN payloads included: select moves data, it does no arithmetic.

Fully pipelined: one result per cycle, ``LATENCY`` cycles from operand to result.
"""

from amaranth.hdl import Mux

from .opcodes import SelectOp
from .pipeline import PipelinedUnit


__all__ = ["FPSelect"]


class FPSelect(PipelinedUnit):
    """``c[0] ? a : b``; latency :data:`LATENCY` cycles."""

    OPS = SelectOp
    LATENCY = 1

    def datapath(self, m, pipe, record):
        value = Mux(record.c[0], record.a, record.b)
        return pipe.register(value, "value")
