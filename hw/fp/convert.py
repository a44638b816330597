"""Conversions between binary32 and bfloat16 (same sign and exponent fields, 7 instead of
23 fraction bits).

Operations (:class:`~.opcodes.ConvertOp`; only the bit in which the two codes differ is decoded,
:func:`~.opcodes.selects`):

``F32_TO_BF16``: ``a`` rounded to nearest, ties to even; the 16-bit result sits in the
    low half of the result word, the high half is 0. Because both formats share the
    exponent field, rounding is an integer addition on the encoding: adding 0x7FFF plus
    the kept LSB to ``a`` and keeping the upper half rounds normals and subnormals alike,
    and a carry out of the largest finite value lands exactly on ±inf. A NaN gives the
    canonical quiet bfloat16 NaN 0x7FC0.
``BF16_TO_F32``: the bfloat16 in the low 16 bits of ``a`` (the high half is ignored)
    widened exactly; a NaN gives the canonical 0x7FC00000.

Fully pipelined: one result per cycle, ``LATENCY`` cycles from operand to result.
"""

from amaranth.hdl import Mux, Cat, Const

from .float32 import CANONICAL_NAN, unpack
from .opcodes import ConvertOp, selects
from .pipeline import PipelinedUnit


__all__ = ["FPConvert"]


CANONICAL_BF16_NAN = CANONICAL_NAN >> 16


class FPConvert(PipelinedUnit):
    """f32 -> bf16 and bf16 -> f32; latency :data:`LATENCY` cycles."""

    OPS = ConvertOp
    LATENCY = 1

    def datapath(self, m, pipe, record):
        single = unpack(m, record.a, name="single")
        rounded = (record.a + 0x7FFF + record.a[16])[16:32]
        narrowed = Mux(single.nan, CANONICAL_BF16_NAN, rounded)

        widened_bits = Cat(Const(0, 16), record.a[0:16])
        widened = unpack(m, widened_bits, name="widened")
        widened_value = Mux(widened.nan, CANONICAL_NAN, widened_bits)

        value = Mux(selects(record.op, ConvertOp.BF16_TO_F32), widened_value, narrowed)
        return pipe.register(value, "value")
