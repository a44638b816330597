"""Operation codes of the FP units: the values of the operand record's ``op`` field, one
:mod:`amaranth.lib.enum` per unit, each of the field's :data:`OP_BITS` bits.

This module is the only place a code is written down. The units decode the record's
field against these members (``record.op == AddSubOp.SUB``, :func:`selects`), their
operand layouts type the field with the unit's enum (hw/fp/interface.py), and the op
table (hw/fp/units.py), the checking interface (sim/flows/fp_vectors.py), the tests and
the table in docs/fp.md are derived from them.

Values a unit does not assign: :class:`~.addsub.FPAddSub` and
:class:`~.compare.FPCompare` compare the whole field, so any other value gives ``a + b``,
or 0 (false) for the comparisons; :class:`~.minmax.FPMinMax`, :class:`~.sign.FPSign` and
:class:`~.convert.FPConvert` look only at the bits in which their codes differ
(:func:`selects`), so any other value acts as the code it agrees with there; the units
with one operation ignore the field.
"""

from amaranth.hdl import Cat, Value
from amaranth.lib import enum


__all__ = ["OP_BITS", "selects", "AddSubOp", "MultiplyOp", "FusedMultiplyAddOp", "MinMaxOp",
           "CompareOp", "SelectOp", "SignOp", "ConvertOp", "DivideOp", "SqrtOp"]


OP_BITS = 4


def selects(field, member):
    """Whether the op field ``field`` selects ``member``, judged only on the bits in which
    the codes of ``member``'s enum differ: a decoder no wider than the codes need (one
    bit for two codes), at the price of unassigned values acting as assigned ones (with
    two codes, every value selects one of them)."""
    codes = [code.value for code in type(member)]
    differing = [bit for bit in range(OP_BITS) if any((code ^ codes[0]) >> bit & 1 for code in codes)]
    field = Value.cast(field)
    # Bit selections rather than a masked comparison, which synthesis does not reduce as
    # well; for two codes, the one bit itself.
    terms = [field[bit] if member.value >> bit & 1 else ~field[bit] for bit in differing]
    return terms[0] if len(terms) == 1 else Cat(*terms).all()


class AddSubOp(enum.Enum, shape=OP_BITS):
    ADD = 0
    SUB = 1


class MultiplyOp(enum.Enum, shape=OP_BITS):
    MUL = 0


class FusedMultiplyAddOp(enum.Enum, shape=OP_BITS):
    FMA = 0


class MinMaxOp(enum.Enum, shape=OP_BITS):
    MIN = 0
    MAX = 1


class CompareOp(enum.Enum, shape=OP_BITS):
    EQ = 0
    LT = 1
    LE = 2


class SelectOp(enum.Enum, shape=OP_BITS):
    SELECT = 0


class SignOp(enum.Enum, shape=OP_BITS):
    ABS = 0
    NEG = 1


class ConvertOp(enum.Enum, shape=OP_BITS):
    F32_TO_BF16 = 0
    BF16_TO_F32 = 1


class DivideOp(enum.Enum, shape=OP_BITS):
    DIV = 0


class SqrtOp(enum.Enum, shape=OP_BITS):
    SQRT = 0
