"""Operation codes of the FP units: the values of the operand record's ``op`` field, one
:mod:`amaranth.lib.enum` per unit, each of the field's :data:`OP_BITS` bits.

This module is the only place a code is written down. The units compare the record's
field with these members (``record.op == AddSubOp.SUB``), their operand layouts type the
field with the unit's enum (hw/fp/interface.py), and the op table (hw/fp/units.py), the
checking interface (sim/fp.py), the tests and the table in docs/fp.md are derived from
them. A unit decodes only its own members: any other value of the field gives the result
of the unit's code 0, except in :class:`CompareOp`, where it gives 0 (false).
"""

from amaranth.lib import enum


__all__ = ["OP_BITS", "AddSubOp", "MultiplyOp", "FusedMultiplyAddOp", "MinMaxOp",
           "CompareOp", "SelectOp", "SignOp", "ConvertOp", "DivideOp", "SqrtOp"]


OP_BITS = 4


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
