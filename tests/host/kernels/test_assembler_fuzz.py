"""Fuzzing the assembler (tests/fuzzing.py): the kernel library's sources and the files they
``.include`` (macros among them), mutated at random, and random bytes as a source file.
Each assembles to an image that disassembles to source assembling to the same words, or
fails with an :class:`AssemblyError` whose message starts with the file, line and column
it names, inside the file that was read."""

import importlib.resources
import re

from hypothesis import strategies as st

from matndp.hw.engine.isa import SPEC_BY_MNEMONIC
from matndp.host.kernels.assembler import AssemblyError, assemble, assemble_file
from matndp.host.kernels.disassembler import disassemble
from matndp.host.kernels.image import validate_image
from matndp.host.kernels.syntax import RESERVED_NAMES

from tests.fuzzing import fuzz_tests, mutated_text, outcome, random_bytes, read_file, words_of


_LIBRARY = importlib.resources.files("matndp.host.kernels.library")
_FILES = {entry.name: entry.read_text() for entry in _LIBRARY.iterdir()
          if entry.name.endswith((".s", ".inc"))}
_KERNELS = sorted(name for name in _FILES if name.endswith(".s"))
_INCLUDED = re.compile(r'\.include\s+"([^"]+)"')

_WORDS = words_of(SPEC_BY_MNEMONIC, sorted(RESERVED_NAMES),
                  (".kernel", ".arg", ".init", ".main", ".final", ".include", ".macro", ".endm",
                   '.include "mask.inc"', ".include \"", ".x", ".r", ":", "\\", "\\bits", "[",
                   "]", "[x1 + 4]", ".+1", ".-1", "label:", "0x7f800000", "1.5", "-0.0", "1e39",
                   "2147483648", "-2147483649"))


def _reader(files):
    def read(name, including):
        if name not in files:
            raise FileNotFoundError(f"no file {name}")
        return files[name], name
    return read


@st.composite
def _sources(draw):
    """(the kernel's file name, {name: text} of the one file it reads that is mutated)."""
    main = draw(st.sampled_from(_KERNELS))
    target = draw(st.sampled_from([main, *_INCLUDED.findall(_FILES[main])]))
    return main, {target: draw(mutated_text([_FILES[target]], _WORDS))}


def library_with(changed):
    """Every file of the library, with ``changed`` ({name: text}) in place of the files it
    names."""
    return {**_FILES, **changed}


def _check_error(error, files):
    assert error.filename in files, error
    lines = files[error.filename].splitlines() or [""]
    assert 1 <= error.line <= len(lines), error
    assert error.column >= 1, error
    assert str(error).startswith(f"{error.filename}:{error.line}:{error.column}: {error.problem}")


def _check_image(image):
    validate_image(image)
    again = assemble(disassemble(image), filename="<disassembled>")
    assert again.words == image.words and again.sections == image.sections
    assert again.arguments == image.arguments


def check_mutated_source(case):
    main, changed = case
    files = library_with(changed)
    result = outcome(lambda: assemble(files[main], filename=main, include=_reader(files)),
                     AssemblyError)
    if isinstance(result, AssemblyError):
        _check_error(result, files)
    else:
        _check_image(result)


def check_random_bytes(data):
    read_file(assemble_file, "kernel.s", data, AssemblyError, _check_image)


# The kernels and files the command line's fuzz test runs `matndp kernel asm` on.
SOURCES = _sources()

test_mutated_source, test_mutated_source_large = fuzz_tests(check_mutated_source, _sources(), 150)
test_random_bytes, test_random_bytes_large = fuzz_tests(check_random_bytes, random_bytes(), 50)
