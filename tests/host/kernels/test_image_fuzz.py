"""Fuzzing the kernel file (``.ndpk``, tests/fuzzing.py): files of library kernels mutated at
random as parsed trees and as text, and random bytes. Each reads to a valid image whose
source, as the disassembler writes it, assembles back to the same image, or fails with a
:class:`KernelFileError` naming the file."""

import json
import pathlib
import tempfile

import pytest

from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.disassembler import disassemble
from matndp.host.kernels.image import KernelFileError, load_image, save_image, validate_image
from matndp.host.kernels.library.sources import library_image

from tests.fuzzing import fuzz_tests, mutated_text, mutated_tree, random_bytes, read_file, refused


def _documents():
    """The files of a few library kernels: one section, three, atomics, branches."""
    documents = []
    with tempfile.TemporaryDirectory() as folder:
        for name in ("relu_fwd.s", "softmax_max.s", "layernorm_stats.s", "adam.s"):
            path = save_image(library_image(name), pathlib.Path(folder) / "k.ndpk")
            documents.append(json.loads(path.read_text()))
    return documents


_VALID = _documents()
_KEYS = ("format", "version", "isa", "name", "sections", "arguments", "uses_atomics", "words",
         "init", "main", "final", "0x0000000000000000", "0xffffffffffffffff")


def _check_image(image):
    validate_image(image)
    again = assemble(disassemble(image), filename="<disassembled>")
    assert (again.name, again.words, again.sections, again.arguments, again.uses_atomics) == \
        (image.name, image.words, image.sections, image.arguments, image.uses_atomics)


def check_file(content):
    read_file(load_image, "kernel.ndpk", content, KernelFileError, _check_image)


# The files the command line's fuzz test reads.
FILES = mutated_tree(_VALID, _KEYS).map(json.dumps) | \
    mutated_text([json.dumps(document, indent=1) for document in _VALID], _KEYS) | random_bytes()

test_mutated_tree, test_mutated_tree_large = fuzz_tests(
    check_file, mutated_tree(_VALID, _KEYS).map(json.dumps), 150)
test_mutated_text, test_mutated_text_large = fuzz_tests(
    check_file, mutated_text([json.dumps(document, indent=1) for document in _VALID], _KEYS), 60)
test_random_bytes, test_random_bytes_large = fuzz_tests(check_file, random_bytes(), 30)


def _changed(change):
    document = json.loads(json.dumps(_VALID[0]))
    change(document)
    return json.dumps(document)


# What fuzzing found, each kept as a case: (what, the file's text) — each a KernelFileError
# naming the file; none a traceback, none an image whose source does not assemble again.
FINDINGS = [
    ("a number of more digits than Python converts", "1" * 5000),
    ("nesting deeper than the JSON reader's recursion", "[" * 100_000),
    ("a kernel name with a space", _changed(lambda d: d.update(name="relu fwd"))),
    ("an argument name with a space", _changed(lambda d: d.update(arguments={"a b": 0}))),
    ("an argument named as a register", _changed(lambda d: d.update(arguments={"x1": 0}))),
    ("an argument index that is a boolean", _changed(lambda d: d.update(arguments={"Y": 0, "Z": True}))),
]


@pytest.mark.parametrize("what, text", FINDINGS, ids=[what for what, _ in FINDINGS])
def test_finding(tmp_path, what, text):
    refused(load_image, tmp_path / "kernel.ndpk", text, KernelFileError)
