"""The ISA description: its tables are consistent, the word layout is the documented one,
and the decoder refuses every non-canonical word."""

import pytest

from matndp.hw.engine.isa import (DIVISOR_LAYOUT, ELEMENT_MEANING, ERROR_CAUSE_MEANING,
                                  FIELD_MEANING, INSTRUCTION_BITS, INSTRUCTION_FIELDS,
                                  INSTRUCTIONS, OPERAND_KIND_MEANING, SPEC_BY_MNEMONIC,
                                  SPEC_BY_OPCODE, SPECIAL_MEANING, UNIT_MEANING, Element,
                                  ErrorCause, IllegalInstruction, ImmediateUse, Instruction,
                                  InstructionSpec, Opcode, Operand, OperandKind, OperandType,
                                  ScalarSpecial, Unit, VectorSpecial, instruction_layout)


R, S, A, I = OperandKind.REGISTER, OperandKind.SPECIAL, OperandKind.ARGUMENT, OperandKind.IMMEDIATE


def test_the_word_is_64_bits_laid_out_as_documented():
    assert instruction_layout().size == INSTRUCTION_BITS == 64
    assert INSTRUCTION_FIELDS == {
        "opcode": (0, 8), "rd": (8, 4), "a.index": (12, 4), "a.kind": (16, 2),
        "b.index": (18, 4), "b.kind": (22, 2), "c.index": (24, 4), "c.kind": (28, 2),
        "release": (30, 1), "exit": (31, 1), "imm": (32, 32)}
    assert DIVISOR_LAYOUT.size == 64


def test_every_opcode_but_illegal_has_one_spec_named_after_it():
    assert set(SPEC_BY_OPCODE) == set(Opcode) - {Opcode.ILLEGAL}
    assert len(SPEC_BY_MNEMONIC) == len(INSTRUCTIONS) == len(SPEC_BY_OPCODE)
    for spec in INSTRUCTIONS:
        assert spec.opcode.name == spec.mnemonic.upper()


def test_every_name_has_a_meaning():
    assert set(FIELD_MEANING) == {name.split(".")[0] for name in INSTRUCTION_FIELDS}
    assert set(OPERAND_KIND_MEANING) == set(OperandKind)
    assert set(SPECIAL_MEANING) == set(ScalarSpecial) | set(VectorSpecial)
    assert set(ELEMENT_MEANING) == set(Element)
    assert set(UNIT_MEANING) == set(Unit)
    assert set(ERROR_CAUSE_MEANING) == set(ErrorCause)


def test_operand_rules_of_the_specs():
    for spec in INSTRUCTIONS:
        for name in spec.address:
            assert getattr(spec, name) is OperandType.SCALAR
        for name in "abc":
            assert (spec.element(name) is not None) == (getattr(spec, name) is OperandType.VECTOR)
        if spec.is_branch:
            assert spec.immediate is ImmediateUse.TARGET and not spec.writes
    assert {spec.mnemonic for spec in INSTRUCTIONS if spec.is_atomic} == {"samoadd", "samomax", "samofma"}


@pytest.mark.parametrize("arguments, problem", [
    (dict(immediate=ImmediateUse.OFFSET), "offset immediate goes with address"),
    (dict(immediate=ImmediateUse.OFFSET, address=("c",)), "must be scalar"),
    (dict(elements=(None, None, None)), "element type"),
    (dict(elements=(Element.FP32, Element.FP32, Element.FP32)), "element type"),
])
def test_spec_constructor_errors(arguments, problem):
    base = dict(mnemonic="vadd", opcode=Opcode.VADD, unit=Unit.FMA, rd=OperandType.VECTOR,
                a=OperandType.VECTOR, b=OperandType.VECTOR, c=OperandType.NONE, semantics="",
                elements=(Element.FP32, Element.FP32, None))
    base.update(arguments)
    with pytest.raises(ValueError, match=problem):
        InstructionSpec(**base)


def test_encode_places_every_field():
    instruction = Instruction(Opcode.VFMA, rd=5, a=Operand(S, 0), b=Operand(A, 3),
                              c=Operand(I, 0), imm=0x3F800000)
    word = instruction.encode()
    assert word & 0xFF == Opcode.VFMA.value
    assert (word >> 8) & 0xF == 5
    assert (word >> 12) & 0x3F == (S.value << 4) | 0
    assert (word >> 18) & 0x3F == (A.value << 4) | 3
    assert (word >> 24) & 0x3F == (I.value << 4)
    assert word >> 32 == 0x3F800000
    assert Instruction.decode(word) == instruction


def test_flags_and_signed_immediates():
    instruction = Instruction(Opcode.SAMOADD, a=Operand(R, 1), c=Operand(R, 2), release=True,
                              exit=True, imm=0xFFFFFFF0)
    word = instruction.encode()
    assert (word >> 30) & 3 == 3
    assert Instruction.decode(word).signed_imm == -16


ILLEGAL_WORDS = [
    (Instruction(Opcode.ILLEGAL), "no instruction"),
    (Instruction(Opcode.NOP, rd=1), "writes no register"),
    (Instruction(Opcode.VABS, rd=1, b=Operand(R, 1)), "has no operand b"),
    (Instruction(Opcode.ADD, rd=1, a=Operand(S, 8)), "no ScalarSpecial 8"),
    (Instruction(Opcode.VADD, rd=1, a=Operand(S, 3)), "no VectorSpecial 3"),
    (Instruction(Opcode.ADD, rd=1, a=Operand(I, 2)), "index 0"),
    (Instruction(Opcode.ADD, rd=1, a=Operand(I), b=Operand(I)), "stands in 2"),
    (Instruction(Opcode.VST, a=Operand(R, 1), c=Operand(I)), "not an operand"),
    (Instruction(Opcode.BEQ, a=Operand(I)), "not an operand"),
    (Instruction(Opcode.ADD, rd=1, imm=5), "no operand uses it"),
    (Instruction(Opcode.NOP, imm=1), "no operand uses it"),
    (Instruction(Opcode.VST, a=Operand(R, 1), c=Operand(R, 1), release=True), "atomics only"),
    (Instruction(Opcode.EXIT, exit=True), "exit flag"),
    (Instruction(Opcode.JUMP, exit=True, imm=1), "exit flag"),
]


@pytest.mark.parametrize("instruction, problem", ILLEGAL_WORDS)
def test_the_decoder_refuses_non_canonical_words(instruction, problem):
    with pytest.raises(IllegalInstruction, match=problem):
        instruction.encode()
    word = 0
    for name, value in (("opcode", instruction.opcode.value), ("rd", instruction.rd),
                        ("release", int(instruction.release)), ("exit", int(instruction.exit)),
                        ("imm", instruction.imm)):
        word |= value << INSTRUCTION_FIELDS[name][0]
    for name in "abc":
        operand = instruction.operand(name)
        word |= operand.kind.value << INSTRUCTION_FIELDS[f"{name}.kind"][0]
        word |= operand.index << INSTRUCTION_FIELDS[f"{name}.index"][0]
    with pytest.raises(IllegalInstruction, match=problem):
        Instruction.decode(word)


def test_unassigned_opcodes_and_oversized_words_are_illegal():
    with pytest.raises(IllegalInstruction, match="0x03 is no instruction"):
        Instruction.decode(0x03)
    with pytest.raises(IllegalInstruction, match="64-bit"):
        Instruction.decode(1 << 64)
    assert Instruction.decode(Opcode.EXIT.value).opcode is Opcode.EXIT


def test_field_values_must_fit():
    with pytest.raises(ValueError, match="does not fit"):
        Instruction(Opcode.ADD, rd=16).encode()
