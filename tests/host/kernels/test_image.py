"""Kernel image files: written and read back, and every bad file refused by name."""

import json

import pytest

from matndp.hw.engine.isa import Instruction
from matndp.host.kernels.assembler import assemble, assemble_instruction
from matndp.host.kernels.image import (KernelFileError, KernelImage, InvalidImage, Section,
                                       isa_fingerprint, load_image, release_hazards, save_image,
                                       validate_image)


SOURCE = """.kernel sum
.arg OUT 1
.init
    sst.x [0], v0
.main
    samoadd.r.x [0], DATA
.final
    sld v1, [0]
    vst.x [OUT], v1
"""


@pytest.fixture
def image():
    return assemble(SOURCE)


def test_save_and_load(tmp_path, image):
    path = save_image(image, tmp_path / "sum.ndpk")
    document = json.loads(path.read_text())
    assert document["format"] == "matndp-kernel" and document["version"] == 1
    assert document["isa"] == isa_fingerprint()
    assert document["sections"] == {"init": 0, "main": 1, "final": 2}
    assert all(len(word) == 18 for word in document["words"])
    assert load_image(path) == image


def _write(tmp_path, image, **changes):
    path = save_image(image, tmp_path / "k.ndpk")
    document = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            del document[key]
        else:
            document[key] = value
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("changes, message", [
    (dict(format="other"), "not a matNDP kernel"),
    (dict(version=2), "format version 2"),
    (dict(isa="0123456789abcdef"), "another instruction encoding"),
    (dict(name=None), "no 'name'"),
    (dict(words="0x1"), "'words' must be list"),
    (dict(uses_atomics=1), "'uses_atomics' must be bool"),
    (dict(words=["0x2", "12"]), "word 1 is '12'"),
    (dict(words=["0x10000000000000000"]), "not a 64-bit hex string"),
    (dict(sections={"main": 0, "loop": 1}), "unknown section 'loop'"),
    (dict(sections={"main": "0"}), "not an index"),
    (dict(words=["0x0000000000000000", "0x2", "0x2"]), "word 0 (0x0000000000000000): opcode 0x00"),
    (dict(uses_atomics=False), "uses_atomics is False"),
    (dict(sections={"init": 0, "final": 2}), "needs a main section"),
    (dict(sections={"main": 1, "final": 2}), "do not divide"),
    (dict(arguments={"OUT": 16}), "not 0 … 15"),
])
def test_bad_files(tmp_path, image, changes, message):
    path = _write(tmp_path, image, **changes)
    with pytest.raises(KernelFileError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        load_image(path)
    assert str(path) in str(caught.value)


def test_not_json_or_not_text(tmp_path):
    (tmp_path / "a.ndpk").write_text("{")
    with pytest.raises(KernelFileError, match="not JSON"):
        load_image(tmp_path / "a.ndpk")
    (tmp_path / "b.ndpk").write_bytes(b"\xff\xfe")
    with pytest.raises(KernelFileError, match="not a text file"):
        load_image(tmp_path / "b.ndpk")


def test_validation_of_images():
    exit_word, nop_word = 0x2, 0x1
    with pytest.raises(InvalidImage, match="does not end with exit"):
        validate_image(KernelImage("k", (nop_word,), {Section.MAIN: 0}))
    with pytest.raises(InvalidImage, match="do not fit an instruction memory of 1"):
        validate_image(KernelImage("k", (exit_word, exit_word), {Section.MAIN: 0}), 1)
    with pytest.raises(InvalidImage, match="needs a name"):
        validate_image(KernelImage("", (exit_word,), {Section.MAIN: 0}))
    jump_far = 0x26 | (5 << 32)
    with pytest.raises(InvalidImage, match="branches to 5, outside .main"):
        validate_image(KernelImage("k", (jump_far,), {Section.MAIN: 0}))


def _words(*lines):
    return tuple(assemble_instruction(line) for line in lines)


_FALL_THROUGH_HAZARD = _words("samoadd.r [0], v1", "beq x1, x0, .+2", "samoadd [32], v1", "exit")


@pytest.mark.parametrize("image, message, index", [
    (KernelImage("k", (0x2, 0xFFFF_FFFF_FFFF_FFFF), {Section.MAIN: 0}),
     r"word 1 \(0xffffffffffffffff\): .+", 1),
    (KernelImage("k", _words("nop", "beq x1, x0, .+2", "exit"), {Section.MAIN: 0}),
     r"instruction 1 branches to 3, outside \.main \(0 … 2\)", 1),
    (KernelImage("k", _words("exit", "exit", "samoadd.r [0], v1", "exit"),
                 {Section.MAIN: 0, Section.FINAL: 2}, uses_atomics=False),
     r"instruction 2: release in \.final, which holds no ordering ticket", 2),
    (KernelImage("k", _words("exit", "nop", "nop"), {Section.MAIN: 0, Section.FINAL: 1}),
     r"\.final does not end with exit \(its last instruction, 2, would run into what follows\)", 2),
    # the atomic after the release is reached only by falling through the branch
    (KernelImage("k", _FALL_THROUGH_HAZARD, {Section.MAIN: 0}, uses_atomics=True),
     r"instruction 2: an atomic after the ordering ticket was released", 2),
    (KernelImage("k", _words("samoadd [0], v1", "exit"), {Section.MAIN: 0}),
     r"uses_atomics is False, but \.main holds scratchpad atomics", None),
    (KernelImage("k", _words("exit"), {Section.MAIN: 0}, uses_atomics=True),
     r"uses_atomics is True, but \.main holds no scratchpad atomics", None),
    (KernelImage("k", _words("exit"), {Section.MAIN: 0}, {"A": 16}),
     r"argument 'A' has index 16, not 0 … 15", None),
    (KernelImage("k", _words("exit"), {Section.MAIN: 0}, {"A": 1, "B": 1}),
     r"two argument names share one index", None),
    (KernelImage("k", _words("exit", "exit"), {Section.MAIN: 0, Section.FINAL: 2}),
     r"section starts \[0, 2\] do not divide 2 instructions into non-empty sections from 0",
     None),
    (KernelImage("k", _words("exit"), {Section.INIT: 0}), r"a kernel needs a main section", None),
])
def test_each_refusal_names_the_instruction_at_fault(image, message, index):
    with pytest.raises(InvalidImage, match=f"^{message}$") as caught:
        validate_image(image)
    assert caught.value.index == index


def test_a_release_hazard_is_found_on_every_path():
    """release_hazards walks both ways out of a branch and around a loop: the atomic after
    the release is a hazard whichever way reaches it; a branch out of the range is not
    followed."""
    decoded = [Instruction.decode(word) for word in _FALL_THROUGH_HAZARD]
    assert release_hazards(decoded, 0, 4) == [2]
    taken = [Instruction.decode(word) for word in _words(
        "samoadd.r [0], v1", "bne x1, x0, .+3", "exit", "exit", "samoadd [32], v1", "exit")]
    assert release_hazards(taken, 0, 6) == [4]
    loop = [Instruction.decode(word) for word in _words(
        "samoadd [32], v1", "samoadd.r [0], v1", "bne x1, x0, .-2", "exit")]
    assert release_hazards(loop, 0, 4) == [0, 1]
    assert release_hazards(loop, 1, 4) == []       # the branch back leaves the range
