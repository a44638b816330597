"""Kernel image files: written and read back, and every bad file refused by name."""

import json

import pytest

from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.image import (KernelFileError, KernelImage, InvalidImage, Section,
                                       isa_fingerprint, load_image, save_image, validate_image)


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
