"""Assembly and disassembly are inverse: random valid instruction streams go through
text and back to the same words, and any 64-bit word either disassembles to text that
assembles to it or is reported illegal."""

from hypothesis import given, settings, strategies as st

from matndp.hw.engine.isa import (INSTRUCTION_FIELDS, INSTRUCTIONS, SPECIALS, IllegalInstruction,
                                  ImmediateUse, Instruction, Opcode, Operand, OperandKind,
                                  OperandType)
from matndp.host.kernels.assembler import assemble, assemble_instruction
from matndp.host.kernels.disassembler import disassemble, disassemble_instruction
from matndp.host.kernels.image import KernelImage, Section, release_hazards, section_ranges


_BRANCH_FREE = [spec for spec in INSTRUCTIONS if spec.immediate is not ImmediateUse.TARGET]
_BRANCHES = [spec for spec in INSTRUCTIONS if spec.immediate is ImmediateUse.TARGET]


@st.composite
def operand_fields(draw, spec):
    """rd, operands and imm of a valid instruction of ``spec`` (branch targets aside)."""
    fields = {"rd": draw(st.integers(0, 15)) if spec.writes else 0}
    immediate = False
    for name in "abc":
        kind = getattr(spec, name)
        if kind is OperandType.NONE:
            fields[name] = Operand()
            continue
        kinds = [OperandKind.REGISTER, OperandKind.SPECIAL, OperandKind.ARGUMENT]
        if spec.immediate is ImmediateUse.OPERAND and not immediate:
            kinds.append(OperandKind.IMMEDIATE)
        chosen = draw(st.sampled_from(kinds))
        if chosen is OperandKind.IMMEDIATE:
            immediate = True
            fields[name] = Operand(chosen, 0)
        elif chosen is OperandKind.SPECIAL:
            fields[name] = Operand(chosen, draw(st.integers(0, len(SPECIALS[kind]) - 1)))
        else:
            fields[name] = Operand(chosen, draw(st.integers(0, 15)))
    uses_imm = immediate or spec.immediate is ImmediateUse.OFFSET
    fields["imm"] = draw(st.integers(0, (1 << 32) - 1)) if uses_imm else 0
    return fields


@st.composite
def instruction_streams(draw):
    """A valid kernel image: 1–3 sections of random instructions with in-section
    branches, each ending in exit, release flags only where no atomic follows them."""
    layout = draw(st.sampled_from([[Section.MAIN], [Section.INIT, Section.MAIN],
                                   [Section.MAIN, Section.FINAL],
                                   [Section.INIT, Section.MAIN, Section.FINAL]]))
    sizes = [draw(st.integers(1, 12)) for _ in layout]
    sections, instructions = {}, []
    for section, size in zip(layout, sizes):
        start = len(instructions)
        sections[section] = start
        for index in range(size):
            pc = start + index
            if index == size - 1:
                if draw(st.booleans()):
                    instructions.append(Instruction(Opcode.EXIT))
                    continue
                spec = draw(st.sampled_from([s for s in _BRANCH_FREE if s.opcode is not Opcode.EXIT]))
                exit_flag = True
            elif draw(st.integers(0, 4)) == 0:
                spec = draw(st.sampled_from(_BRANCHES))
                fields = draw(operand_fields(spec))
                target = draw(st.integers(start, start + size - 1))
                fields["imm"] = (target - pc) & 0xFFFFFFFF
                instructions.append(Instruction(spec.opcode, **fields))
                continue
            else:
                spec = draw(st.sampled_from(_BRANCH_FREE))
                exit_flag = spec.opcode is not Opcode.EXIT and draw(st.integers(0, 5)) == 0
            release = spec.is_atomic and section is Section.MAIN and draw(st.booleans())
            instructions.append(Instruction(spec.opcode, **draw(operand_fields(spec)),
                                            release=release, exit=exit_flag))
    image = KernelImage("random", [], sections)
    start, end = section_ranges(KernelImage("r", [0] * len(instructions), sections))[Section.MAIN]
    if release_hazards(instructions, start, end):
        instructions = [Instruction(**{**vars(i), "release": False}) for i in instructions]
    names = draw(st.dictionaries(st.integers(0, 15), st.from_regex(r"P[a-z]{1,4}", fullmatch=True),
                                 max_size=4))
    arguments = {}
    for index, name in names.items():
        arguments.setdefault(name, index)
    image = KernelImage("random", tuple(i.encode() for i in instructions), sections, arguments,
                        any(i.spec.is_atomic for i in instructions[start:end]))
    return image


@settings(max_examples=200, deadline=None)
@given(instruction_streams())
def test_words_to_text_to_words(image):
    text = disassemble(image)
    again = assemble(text)
    assert again.words == image.words
    assert again.sections == image.sections and again.arguments == image.arguments
    assert again.uses_atomics == image.uses_atomics
    assert disassemble(again) == text


def _span(*names):
    """(lsb, width) of the bits the instruction fields ``names`` cover together."""
    lsb = min(INSTRUCTION_FIELDS[name][0] for name in names)
    return lsb, max(sum(INSTRUCTION_FIELDS[name]) for name in names) - lsb


_OPCODE_BITS = INSTRUCTION_FIELDS["opcode"][1]
# Field groups a generated word clears at random: rd, each operand, the two flags, imm.
_CLEARABLE = [_span("rd"), *(_span(f"{o}.index", f"{o}.kind") for o in "abc"),
              _span("release", "exit"), _span("imm")]


@st.composite
def legal_looking_words(draw):
    opcode = draw(st.sampled_from([spec.opcode.value for spec in INSTRUCTIONS]))
    high = draw(st.integers(0, (1 << (64 - _OPCODE_BITS)) - 1))
    # Clear random fields so that more of them come out canonical.
    for lsb, width in _CLEARABLE:
        if draw(st.booleans()):
            high &= ~(((1 << width) - 1) << (lsb - _OPCODE_BITS))
    return opcode | high << _OPCODE_BITS


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.integers(0, (1 << 64) - 1), legal_looking_words()))
def test_any_word_disassembles_or_is_illegal(word):
    try:
        text = disassemble_instruction(word)
    except IllegalInstruction:
        try:
            Instruction.decode(word)
        except IllegalInstruction:
            return
        raise AssertionError("decode accepts a word the disassembler refused")
    assert assemble_instruction(text) == word, text


@st.composite
def written_kernels(draw):
    """Kernel text written with the freedoms of the syntax: comments, spacing, named and
    numbered arguments, address terms in any order, labels on their own lines."""
    lines = [".kernel written", ".arg SRC 2", "; a comment", ".main"]
    count = draw(st.integers(1, 10))
    for index in range(count):
        space = draw(st.sampled_from([" ", "   ", "\t"]))
        choice = draw(st.integers(0, 4))
        if choice == 0:
            terms = draw(st.permutations(["x3", "SRC", str(draw(st.integers(-64, 64)) * 32)]))
            lines.append(f"    vld{space}v{index % 16},{space}[{' + '.join(terms)}]".replace("+ -", "- "))
        elif choice == 1:
            value = draw(st.sampled_from(["1.5", "-0.0", "inf", "nan", "0x3f800000", "2e-3"]))
            lines.append(f"    vmul v1, DATA, {value}  # scale")
        elif choice == 2:
            value = draw(st.integers(-(1 << 31), (1 << 31) - 1))
            text = draw(st.sampled_from([str(value), hex(value)]))
            lines.append(f"    add x1,x2,{text}")
        elif choice == 3:
            lines.append(f"here{index}:")
            lines.append(f"    bne x1, a2, here{index}")
        else:
            lines.append("    samoadd [x1 + 32], v2 ; accumulate")
    lines.append("    exit")
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None)
@given(written_kernels())
def test_text_to_words_to_text_to_words(text):
    image = assemble(text)
    assert assemble(disassemble(image)).words == image.words
