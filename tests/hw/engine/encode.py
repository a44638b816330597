"""Instruction words for the RTL tests, packed straight from the ISA's layout (the
assembler is tested on its own; these tests must not depend on it)."""

from amaranth.hdl import Const

from matndp.hw.engine.isa import Opcode, OperandKind, ScalarSpecial, VectorSpecial, instruction_layout


__all__ = ["x", "v", "special", "arg", "imm", "instruction", "f32"]


def x(index):
    return (OperandKind.REGISTER, index)


v = x


def special(name):
    member = ScalarSpecial[name] if name in ScalarSpecial.__members__ else VectorSpecial[name]
    return (OperandKind.SPECIAL, member.value)


def arg(index):
    return (OperandKind.ARGUMENT, index)


IMM = (OperandKind.IMMEDIATE, 0)


def imm():
    return IMM


def f32(value):
    import numpy as np
    return int(np.array([value], dtype=np.float32).view(np.uint32)[0])


def instruction(opcode, rd=0, a=None, b=None, c=None, *, immediate=0, exit=False, release=False):
    def operand(value):
        if value is None:
            return {"kind": 0, "index": 0}
        kind, index = value
        return {"kind": kind, "index": index}
    word = Const.cast(instruction_layout().const({
        "opcode": Opcode(opcode) if not isinstance(opcode, Opcode) else opcode,
        "rd": rd, "a": operand(a), "b": operand(b), "c": operand(c),
        "release": int(release), "exit": int(exit), "imm": immediate & 0xFFFF_FFFF,
    }))
    return word.value
