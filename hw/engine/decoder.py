"""Instruction decoder: one 64-bit word in, the control of one instruction out.

Every control value is a constant per opcode taken from :data:`~.isa.INSTRUCTIONS`, so
the decoder cannot disagree with the assembler, the instruction-set simulator or the
documentation. A word is legal exactly when :meth:`~.isa.Instruction.check` accepts it
(the rules are stated there once; a test compares the two on random words).
"""

from amaranth.hdl import Module, Signal, unsigned
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from .isa import (INSTRUCTIONS, ImmediateUse, Opcode, OperandKind, OperandType, ScalarSpecial,
                  Unit, VectorSpecial, instruction_layout)


__all__ = ["UnitCode", "OperandClass", "operand_control_layout", "control_layout", "Decoder"]


# The ISA's unit and operand-type lists as hardware codes, in the ISA's order.
UnitCode = enum.Enum("UnitCode", [(unit.name, code) for code, unit in enumerate(Unit)])
OperandClass = enum.Enum("OperandClass",
                         [(kind.name, code) for code, kind in enumerate(OperandType)])


def operand_control_layout():
    return data.StructLayout({
        "type":  OperandClass,
        "kind":  OperandKind,
        "index": unsigned(4),
    })


def control_layout():
    return data.StructLayout({
        "legal":         unsigned(1),
        "opcode":        Opcode,
        "unit":          UnitCode,
        "rd":            unsigned(4),
        "rd_type":       OperandClass,
        "a":             operand_control_layout(),
        "b":             operand_control_layout(),
        "c":             operand_control_layout(),
        # Which operands add up to a memory or scratchpad address (with the immediate).
        "address_a":     unsigned(1),
        "address_b":     unsigned(1),
        "imm":           unsigned(32),
        "imm_operand":   unsigned(1),      # the immediate may stand in an operand
        "release":       unsigned(1),
        "exit":          unsigned(1),
        "atomic":        unsigned(1),
    })


_OPERAND_CLASS = {kind: OperandClass[kind.name] for kind in OperandType}


class Decoder(wiring.Component):
    """``instruction`` (a word) in, ``control`` out, combinationally."""

    instruction: In(instruction_layout())
    control: Out(control_layout())

    def elaborate(self, platform):
        m = Module()
        word = self.instruction
        control = self.control

        m.d.comb += [
            control.opcode.eq(word.opcode),
            control.rd.eq(word.rd),
            control.imm.eq(word.imm),
            control.release.eq(word.release),
            control.exit.eq(word.exit),
        ]
        for name in ("a", "b", "c"):
            field = getattr(word, name)
            m.d.comb += [getattr(control, name).kind.eq(field.kind),
                         getattr(control, name).index.eq(field.index)]

        with m.Switch(word.opcode):
            for spec in INSTRUCTIONS:
                with m.Case(spec.opcode):
                    m.d.comb += [
                        control.unit.eq(UnitCode[spec.unit.name]),
                        control.rd_type.eq(_OPERAND_CLASS[spec.rd]),
                        control.address_a.eq("a" in spec.address),
                        control.address_b.eq("b" in spec.address),
                        control.imm_operand.eq(spec.immediate is ImmediateUse.OPERAND),
                        control.atomic.eq(spec.is_atomic),
                        control.legal.eq(self._fields_legal(word, spec)),
                    ]
                    for name in ("a", "b", "c"):
                        m.d.comb += getattr(control, name).type.eq(
                            _OPERAND_CLASS[getattr(spec, name)])
            with m.Default():
                m.d.comb += [control.unit.eq(UnitCode.CONTROL), control.legal.eq(0)]
        return m

    @staticmethod
    def _fields_legal(word, spec):
        legal = 1
        if spec.rd is OperandType.NONE:
            legal &= word.rd == 0
        for name in ("a", "b", "c"):
            field = getattr(word, name)
            spec_type = getattr(spec, name)
            if spec_type is OperandType.NONE:
                legal &= field.as_value() == 0
                continue
            specials = len(ScalarSpecial if spec_type is OperandType.SCALAR else VectorSpecial)
            special_ok = field.index < specials
            immediate_ok = (field.index == 0) if spec.immediate is ImmediateUse.OPERAND else 0
            with_kind = ((field.kind == OperandKind.REGISTER) |
                         ((field.kind == OperandKind.SPECIAL) & special_ok) |
                         (field.kind == OperandKind.ARGUMENT) |
                         ((field.kind == OperandKind.IMMEDIATE) & immediate_ok))
            legal &= with_kind
        if not spec.is_atomic:
            legal &= word.release == 0
        if spec.opcode is Opcode.EXIT or spec.unit is Unit.BRANCH:
            legal &= word.exit == 0
        if spec.immediate is ImmediateUse.OPERAND:
            immediates = sum(getattr(word, name).kind == OperandKind.IMMEDIATE
                             for name in spec.sources)
            legal &= immediates <= 1
            legal &= (immediates != 0) | (word.imm == 0)
        return legal
