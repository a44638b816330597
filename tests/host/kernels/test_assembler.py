"""The assembler: syntax, literals, encodings, and every error with its position."""

import numpy as np
import pytest

from matndp.hw.engine.isa import (Instruction, Opcode, Operand, OperandKind, ScalarSpecial,
                                  VectorSpecial)
from matndp.host.kernels.assembler import (AssemblyError, assemble, assemble_file,
                                           assemble_instruction)
from matndp.host.kernels.image import Section


R, S, A, I = OperandKind.REGISTER, OperandKind.SPECIAL, OperandKind.ARGUMENT, OperandKind.IMMEDIATE


def kernel(body, header=".kernel k\n.arg OUT 3\n\n"):
    return assemble(header + body, "k.s")


def one(text):
    return Instruction.decode(assemble_instruction(text, {"OUT": 3}))


def test_a_complete_kernel():
    image = kernel("""
.init
    sst.x [0], v0              ; clear
.main
    vmax v1, DATA, 0.0         # relu
    add x1, OFFSET, OUT
loop: blt x1, x0, loop
    samoadd.r [x1 + 32], v1
    vst.x [x1], v1
.final
    exit
""")
    assert image.name == "k" and image.arguments == {"OUT": 3} and image.uses_atomics
    assert image.sections == {Section.INIT: 0, Section.MAIN: 1, Section.FINAL: 6}
    words = [Instruction.decode(word) for word in image.words]
    assert words[1] == Instruction(Opcode.VMAX, 1, Operand(S, VectorSpecial.DATA.value), Operand(I), imm=0)
    assert words[2] == Instruction(Opcode.ADD, 1, Operand(S, ScalarSpecial.OFFSET.value), Operand(A, 3))
    assert words[3].opcode is Opcode.BLT and words[3].signed_imm == 0
    assert words[4] == Instruction(Opcode.SAMOADD, a=Operand(R, 1), c=Operand(R, 1), release=True, imm=32)
    assert words[5].exit


def test_operand_order_and_address_forms():
    assert one("vld v2, [x1 + x2 + 64]") == Instruction(Opcode.VLD, 2, Operand(R, 1), Operand(R, 2), imm=64)
    assert one("vld v2, [64 + x1]") == Instruction(Opcode.VLD, 2, Operand(R, 1), imm=64)
    assert one("vld v2, [x1 - 8]").signed_imm == -8
    assert one("vld v2, [-32]") == Instruction(Opcode.VLD, 2, imm=0xFFFFFFE0)
    assert one("vld v2, [x0 + OFFSET]") == Instruction(Opcode.VLD, 2, Operand(R, 0), Operand(S, 0))
    assert one("vst [OUT + a4], DATA") == Instruction(Opcode.VST, a=Operand(A, 3), b=Operand(A, 4), c=Operand(S, 0))
    assert one("samofma [x3 + 32], v1, v2") == Instruction(Opcode.SAMOFMA, a=Operand(R, 3), b=Operand(R, 1), c=Operand(R, 2), imm=32)
    assert one("vget x1, v2, 3") == Instruction(Opcode.VGET, 1, Operand(R, 2), Operand(I), imm=3)
    assert one("jump .+2").signed_imm == 2 and one("beq x1, x2, .-3").signed_imm == -3


@pytest.mark.parametrize("text, imm", [
    ("add x1, x2, -1", 0xFFFFFFFF), ("add x1, x2, 0x7fffffff", 0x7FFFFFFF),
    ("add x1, x2, -0x80000000", 0x80000000), ("add x1, x2, 0b101", 5), ("add x1, x2, 1_000", 1000),
    ("vadd v1, v2, 1.5", 0x3FC00000), ("vadd v1, v2, -0.0", 0x80000000),
    ("vadd v1, v2, inf", 0x7F800000), ("vadd v1, v2, -inf", 0xFF800000),
    ("vadd v1, v2, nan", 0x7FC00000), ("vadd v1, v2, 0x3f800000", 0x3F800000),
    ("vadd v1, v2, 1e-45", 0x00000001), ("vadd v1, v2, 3.4028235e38", 0x7F7FFFFF),
    ("viadd v1, v2, -1", 0xFFFFFFFF), ("viadd v1, v2, 0xffffffff", 0xFFFFFFFF),
    ("vsel v1, 1.0, v2, v3", 0x3F800000), ("vsel v1, 7, v2, v3", 7),
])
def test_literals(text, imm):
    assert one(text).imm == imm


def test_float_literals_round_as_numpy_float32():
    for text in ("0.1", "1.00000005960464477539062500000001", "2.5e-40", "-123.456"):
        expected = int(np.float32(text).view(np.uint32))
        assert one(f"vmul v1, v2, {text}").imm == expected


ERRORS = [
    # (source body, line, column, message fragment)
    (".main\n    vaddd v1, v2, v3\n    exit", 5, 5, "unknown mnemonic 'vaddd' (did you mean vadd?)"),
    (".main\n    VADD v1, v2, v3\n    exit", 5, 5,
     "unknown mnemonic 'VADD' (mnemonics are lower case: vadd)"),
    (".main\n    vadd v1, x2, v3\n    exit", 5, 14,
     "x2 is a scalar register, but operand a of vadd is vector"),
    (".main\n    add x1, v2, x3\n    exit", 5, 13,
     "v2 is a vector register, but operand a of add is scalar"),
    (".main\n    add x1, DATA, x3\n    exit", 5, 13, "DATA is a vector special"),
    (".main\n    vadd v1, OFFSET, v3\n    exit", 5, 14, "OFFSET is a scalar special"),
    (".main\n    add x1, offset, x3\n    exit", 5, 13, "special registers are upper case"),
    (".main\n    add x1, x16, x3\n    exit", 5, 13, "registers are x0 … x15"),
    (".main\n    add x1, a16, x3\n    exit", 5, 13, "argument words are a0 … a15"),
    (".main\n    add x1, x2\n    exit", 5, 5, "add takes 3 operands (add xd, xa, xb), not 2"),
    (".main\n    add v1, x2, x3\n    exit", 5, 9, "destination of add is a scalar register"),
    (".main\n    add x1, 1, 2\n    exit", 5, 16, "only one operand can be an immediate"),
    (".main\n    vst [x1], 1.0\n    exit", 5, 15, "takes no immediate operand: its immediate is the address offset"),
    (".main\n    add x1, x2, 0xffffffff\n    exit", 5, 17, "out of range"),
    (".main\n    add x1, x2, 2147483648\n    exit", 5, 17, "out of range"),
    (".main\n    viadd v1, v2, 0x100000000\n    exit", 5, 19, "out of range for a 32-bit lane"),
    (".main\n    vld v1, [x1 + 0x80000000]\n    exit", 5, 19, "offset 2147483648 is out of range"),
    (".main\n    vadd v1, v2, 2\n    exit", 5, 18, "write a float (2.0) or raw bits"),
    (".main\n    viadd v1, v2, 2.0\n    exit", 5, 19, "holds 32-bit integers"),
    (".main\n    add x1, x2, 1.5\n    exit", 5, 17, "a scalar immediate is an integer"),
    (".main\n    vadd v1, v2, 1e39\n    exit", 5, 18, "beyond the largest FP32"),
    (".main\n    vadd v1, v2, 1e-50\n    exit", 5, 18, "rounds to zero"),
    (".main\n    vadd v1, v2, -nan\n    exit", 5, 18, "NaN literal has no sign"),
    (".main\n    vadd v1, v2, -0x1\n    exit", 5, 18, "raw FP32 bits are not negative"),
    (".main\n    add x1, x2, 12ab\n    exit", 5, 17, "malformed number"),
    (".main\n    vld v1, [x1 + x2 + x3]\n    exit", 5, 24, "adds at most 2 operands"),
    (".main\n    samofma [x1 + x2], v1, v2\n    exit", 5, 19, "adds at most 1 operand"),
    (".main\n    vld v1, [x1 + 4 + 8]\n    exit", 5, 23, "a second offset"),
    (".main\n    vld v1, [x1 - x2]\n    exit", 5, 19, "only the offset may be subtracted"),
    (".main\n    vld v1, [x1\n    exit", 5, 13, "missing ']'"),
    (".main\n    vld v1, x1\n    exit", 5, 13, "needs an address in brackets"),
    (".main\n    add x1, [x1], x2\n    exit", 5, 13, "is not an address"),
    (".main\n    beq x1, x2, nowhere\n    exit", 5, 17, "undefined label 'nowhere'"),
    (".main\n    beq x1, x2, 4\n    exit", 5, 17, "a branch target is a label"),
    (".main\nl:  add x1, l, x2\n    exit", 5, 13, "label l can only be a branch target"),
    (".main\nl:  nop\nl:  exit", 6, 1, "'l' is already defined at line 5"),
    (".main\nx1: exit", 5, 1, "'x1' is reserved"),
    (".main\nOUT: exit", 5, 1, "'OUT' is already an argument"),
    (".main\n    add x1, x2, undeclared\n    exit", 5, 17, "unknown name 'undeclared'"),
    (".main\n    vst.r [x1], v1\n    exit", 5, 8, ".r (release) is only for scratchpad atomics"),
    (".init\n    samoadd.r.x [0], v1\n.main\n    exit", 5, 12, "only .main µthreads hold an ordering ticket"),
    (".main\n    exit.x", 5, 9, "exit already ends the µthread"),
    (".main\n    l: jump.x l", 5, 12, "is a branch: it cannot also exit"),
    (".main\n    vst.y [x1], v1\n    exit", 5, 8, "unknown flag .y"),
    (".main\n    vst.x.x [x1], v1", 5, 10, "flag .x given twice"),
    (".main\n    samoadd.r [0], v1\n    samoadd.x [32], v1", 6, 5,
     "samoadd: an atomic after the ordering ticket was released (.r) on some path; release on "
     "the last atomic only"),
    # reached only by falling through the branch: the error points at that atomic
    (".main\n    samoadd.r [0], v1\n    beq x1, x0, done\n    samoadd [32], v1\ndone:\n    exit",
     7, 5, "samoadd: an atomic after the ordering ticket was released (.r) on some path; release "
     "on the last atomic only"),
    (".main\n    nop", 5, 5, "does not end its µthread"),
    (".main\n    exit\n.final\n    beq x1, x2, .+5", 7, 5, "branches to 6, outside .final"),
    (".main\nhere: exit\n.final\n    jump here", 7, 10, "label 'here' is in .main; a branch stays in its section"),
    (".main\n.final\n    exit", 4, 1, ".main has no instructions"),
    (".main\n    exit\n.main\n    exit", 6, 1, ".main appears twice"),
    (".init\n    exit", 1, 1, "no .main section"),
    (".main\n    exit\n.arg LATE 5", 6, 1, "declare arguments before the first section"),
    (".arg OUT2 3\n.main\n    exit", 4, 11, "argument word 3 is already named at line 2"),
    (".arg BIG 16\n.main\n    exit", 4, 10, "argument index 16 is out of range"),
    (".arg inf 1\n.main\n    exit", 4, 6, "'inf' is reserved"),
    (".arg a.b 1\n.main\n    exit", 4, 6, "'a.b' is not a valid argument name"),
    (".arg HALF 1.5\n.main\n    exit", 4, 11, "1.5 is not an integer"),
    (".main\nl.x: exit", 5, 1, "'l.x' is not a valid label name"),
    (".main\nx2: exit", 5, 1, "choose another label name"),
    (".main\n    exit\n.loop", 6, 1, "unknown directive .loop"),
    (".main\n    exit ,", 5, 10, "missing operand"),
    (".main\n    exit\n    @", 6, 5, "unexpected character '@'"),
    (".main\n    exit\nend:", 6, 1, "label 'end' labels no instruction"),
    # reported where the section ends with the label pending
    (".main\n    exit\nl:\n.final\n    exit", 7, 1,
     "label 'l' must label an instruction of its section"),
    ("vadd v1, v2, v3\n.main\n    exit", 4, 1, "instruction outside a section"),
    (".main\n    exit\n.kernel again", 6, 1, "one .kernel per file"),
]


@pytest.mark.parametrize("body, line, column, message", ERRORS)
def test_errors_name_file_line_column_and_problem(body, line, column, message):
    with pytest.raises(AssemblyError) as caught:
        kernel(body)
    error = caught.value
    assert message in error.problem
    assert (error.filename, error.line, error.column) == ("k.s", line, column), str(error)
    assert str(error).startswith(f"k.s:{line}:{column}: ")


def test_one_instructions_errors_are_on_line_1_of_its_source():
    with pytest.raises(AssemblyError, match=r"^<instruction>:1:14: unexpected character '@'$"):
        assemble_instruction("vadd v1, v2, @")
    with pytest.raises(AssemblyError, match=r"^op.s:1:1: unknown mnemonic 'vaddd'"):
        assemble_instruction("vaddd v1, v2, v3", filename="op.s")


def test_a_lone_dot_is_the_branchs_own_address():
    assert assemble_instruction("jump .") == assemble_instruction("jump .+0")


def test_header_errors():
    with pytest.raises(AssemblyError, match=r"^<kernel>:1:1: no \.kernel NAME$"):
        assemble("; nothing\n")
    with pytest.raises(AssemblyError, match=r"<kernel>:1:1: \.kernel NAME comes first"):
        assemble(".main\n    exit\n")
    with pytest.raises(AssemblyError, match=r"<kernel>:2:1: \.kernel NAME comes first"):
        assemble("\n.arg X 1\n.kernel a\n.main\n exit\n")
    with pytest.raises(AssemblyError, match=r"k.s:1:1: \.kernel takes one name"):
        assemble(".kernel\n.main\n exit\n", "k.s")


def test_kernel_too_large_for_the_instruction_memory():
    body = ".main\n" + "    nop\n" * 8 + "    exit\n"
    assert len(kernel(body).words) == 9
    with pytest.raises(AssemblyError, match=r"k.s:13:5: kernel too large: 9 instructions, "
                                            r"the instruction memory holds 8"):
        assemble(".kernel k\n.arg OUT 3\n\n" + body, "k.s", instruction_words=8)


def test_release_on_the_last_atomic_of_every_path_is_accepted():
    kernel(""".main
    beq x1, x0, other
    samoadd.r.x [0], v1
other:
    samoadd [32], v1
    samoadd.r [0], v1
    exit
""")
    with pytest.raises(AssemblyError, match="after the ordering ticket was released"):
        kernel(""".main
loop:
    samoadd.r [0], v1
    bne x1, x0, loop
    exit
""")


def test_files(tmp_path):
    source = tmp_path / "relu.s"
    source.write_text(".kernel relu\n.main\n    exit\n")
    assert assemble_file(source).name == "relu"
    binary = tmp_path / "junk.s"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(AssemblyError, match="not a UTF-8 text file") as caught:
        assemble_file(binary)
    assert str(caught.value) == f"{binary}:1:1: not a UTF-8 text file"


@pytest.mark.parametrize("text, displacement", [
    ("jump .+7", 7), ("jump . + 7", 7), ("jump .   -   3", -3), ("beq x1, x2, .-0x10", -16),
    ("blt x1, x2, . + 0b11", 3),
])
def test_relative_targets_are_a_dot_a_sign_and_a_number_however_spaced(text, displacement):
    assert one(text).signed_imm == displacement


@pytest.mark.parametrize("text, message", [
    ("jump .+x1", "<instruction>:1:6: a relative target is written '.+N' or '.-N'"),
    ("jump .+", "<instruction>:1:6: a relative target is written '.+N' or '.-N'"),
    ("jump . 4", "<instruction>:1:6: a relative target is written '.+N' or '.-N'"),
    ("jump .+4 x1", "<instruction>:1:6: a relative target is written '.+N' or '.-N'"),
    ("jump .x1", "<instruction>:1:6: cannot read operand '.x1'"),
    ("jump .+2.5", "<instruction>:1:8: 2.5 is not an integer"),
    ("add x1, .+1, x2", "<instruction>:1:9: operand a of add is not a branch target"),
])
def test_a_malformed_relative_target_is_refused_where_it_stands(text, message):
    with pytest.raises(AssemblyError) as caught:
        assemble_instruction(text)
    assert str(caught.value) == message


@pytest.mark.parametrize("body, message", [
    (".main\n    add x16, x1, x2\n    exit", "k.s:5:9: no x16: registers are x0 … x15"),
    (".main\n    vadd v31, v1, v2\n    exit", "k.s:5:10: no v31: registers are v0 … v15"),
    (".main\n    add x1, x2, x16\n    exit", "k.s:5:17: no x16: registers are x0 … x15"),
    (".main\n    vadd v1, v16, v2\n    exit", "k.s:5:14: no v16: registers are v0 … v15"),
    (".main\n    add x1, a17, x2\n    exit", "k.s:5:13: no a17: argument words are a0 … a15"),
])
def test_a_register_beyond_the_register_file_is_refused_whole(body, message):
    # The last register of each kind is accepted; one more is refused.
    assert one("vadd v15, v15, v15") == Instruction(Opcode.VADD, 15, Operand(R, 15), Operand(R, 15))
    assert one("add x15, a15, x15") == Instruction(Opcode.ADD, 15, Operand(A, 15), Operand(R, 15))
    with pytest.raises(AssemblyError) as caught:
        kernel(body)
    assert str(caught.value) == message


@pytest.mark.parametrize("body, message", [
    # The image's checks name the offending instruction, not the kernel's last line.
    (".init\n    nop\n.main\n    exit\n.final\n    exit",
     "k.s:5:5: .init does not end its µthread: its last instruction must be exit, carry .x, "
     "or be a jump"),
    (".init\n    jump .+2\n    exit\n.main\n    exit",
     "k.s:5:5: instruction 0 branches to 2, outside .init (0 … 1)"),
    (".main\n    nop\n    beq x1, x2, .-2\n    exit\n.final\n    exit",
     "k.s:6:5: instruction 1 branches to -1, outside .main (0 … 2)"),
])
def test_an_error_of_the_whole_image_names_the_offending_line(body, message):
    with pytest.raises(AssemblyError) as caught:
        kernel(body)
    assert str(caught.value) == message


def test_a_sign_may_stand_apart_from_its_literal_but_only_before_a_literal():
    assert one("add x1, x2, - 4").imm == 0xFFFFFFFC
    assert one("add x1, x2, + 4").imm == 4
    assert one("vadd v1, v2, - inf").imm == 0xFF800000
    for text, message in (("add x1, x2 + 4, x3", "<instruction>:1:9: cannot read operand 'x2 + 4'"),
                          ("add x1, x2, - x3", "<instruction>:1:13: cannot read operand '- x3'"),
                          ("add x1, x2, 4 4", "<instruction>:1:13: cannot read operand '4 4'")):
        with pytest.raises(AssemblyError) as caught:
            assemble_instruction(text)
        assert str(caught.value) == message
