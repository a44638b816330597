"""The disassembler's text: declared argument names where the image names them, labels
``L<index>`` at branch targets, and relative targets ``.+N`` / ``.-N`` without labels.
(tests/host/kernels/test_roundtrip.py checks that the text assembles back to the words.)"""

from matndp.host.kernels.assembler import assemble, assemble_instruction
from matndp.host.kernels.disassembler import disassemble, disassemble_instruction


def test_a_kernel_reads_back_with_its_argument_names_and_labels():
    image = assemble(""".kernel relu
.arg OUT 3
.main
again:
    vmax v1, DATA, 0.0
    vst [OFFSET + OUT], v1
    add x2, x1, OUT
    beq x1, x0, again
    exit
""")
    assert disassemble(image).splitlines() == [
        ".kernel relu", ".arg OUT 3", "", ".main", "L0:",
        "    vmax       v1, DATA, 0.0",
        "    vst        [OFFSET + OUT], v1",
        "    add        x2, x1, OUT",
        "    beq        x1, x0, L0",
        "    exit"]


def test_relative_targets_carry_their_sign():
    assert disassemble_instruction(assemble_instruction("jump .+0")) == "jump       .+0"
    assert disassemble_instruction(assemble_instruction("jump .+1")) == "jump       .+1"
    assert disassemble_instruction(assemble_instruction("jump .-2")) == "jump       .-2"
    # An argument word the caller does not name keeps its number.
    assert disassemble_instruction(assemble_instruction("beq x1, a3, .+3")) == \
        "beq        x1, a3, .+3"
    assert disassemble_instruction(assemble_instruction("jump .+0"), 5, {5: "here"}) == \
        "jump       here"


def test_arguments_are_declared_in_word_order_whatever_their_names():
    image = assemble(".kernel k\n.arg ZETA 1\n.arg ALPHA 5\n.arg MID 2\n.main\n    exit\n")
    assert disassemble(image).splitlines()[:4] == [".kernel k", ".arg ZETA 1", ".arg MID 2",
                                                   ".arg ALPHA 5"]
