"""Fuzzing the G10 importer (tests/fuzzing.py): a trace directory — kernels.config, the
kernel times, tensors.config, the two fault-laden times files and the workspace sizes —
with one file mutated at random or replaced by random bytes. Each reads to a graph that is
what a workload file can say, with one op per kernel of kernels.config, or fails with a
:class:`WorkloadError` naming the file at fault (and, for a line of it, the line)."""

import pathlib
import re
import tempfile

import pytest
from hypothesis import strategies as st

from matndp.host.workload import WorkloadError, read_g10

from tests.fuzzing import (fuzz_tests, mutated_text, outcome, random_bytes, refused, words_of,
                           write_input)

from .test_format_fuzz import FIXTURE, check_graph


_KERNELS = (FIXTURE / "kernels.config").read_text()
_TIMES = (FIXTURE / "cudnn4.txt").read_text()
_TENSOR_LINE = re.compile(r"tensor\d+ Is weight.*")


def _directory_files():
    """The fixture's files and every optional file G10 writes beside them."""
    tensors = "\n".join(dict.fromkeys(_TENSOR_LINE.findall(_KERNELS))) + "\n"
    times = [float(line.split()[1]) for line in _TIMES.splitlines() if line.strip()]
    faults = "".join(f"{k} {3 * ms:.6f} ms\n" for k, ms in enumerate(times))
    outputs = "".join(f"{k} {2 * ms:.6f} ms\n" for k, ms in enumerate(times))
    workspaces = "".join(f"{k} {4096 * (k % 3)} B\n" for k in range(len(times)))
    return {"kernels.config": _KERNELS, "cudnn4.txt": _TIMES, "tensors.config": tensors,
            "cudnn4PF.txt": faults, "cudnn4InputPF.txt": outputs,
            "cudnn4Workspace.txt": workspaces}


_FILES = _directory_files()
_OPTIONAL = ("tensors.config", "cudnn4PF.txt", "cudnn4InputPF.txt", "cudnn4Workspace.txt")
_WORDS = words_of(("Kernel ID: ", ", Name: ", "Parent Layer ID:", "; Name:", "Execution Time: ",
                   "Input Tensors:", "Output Tensors:", "_" * 68, "tensor1", "tensor99",
                   " Is weight (global)?: ", ", Size in byte: ", ", Range:", "--", " ms", " B",
                   "0000", "1e400", "1.5.5", "Apply_Grad", "Backward", "(4,1024)", "\n\n"))


@st.composite
def _directories(draw, corrupt):
    """{file name: text or bytes}: the files present, one of them mutated (or, with
    ``corrupt``, replaced by random bytes)."""
    present = ["kernels.config", "cudnn4.txt"] + [
        name for name in _OPTIONAL if draw(st.booleans())]
    files = {name: _FILES[name] for name in present}
    target = draw(st.sampled_from(present))
    files[target] = draw(random_bytes() if corrupt else mutated_text([files[target]], _WORDS))
    return files


def check_directory(files):
    with tempfile.TemporaryDirectory() as folder:
        directory = pathlib.Path(folder) / "trace"
        directory.mkdir()
        for name, content in files.items():
            path = directory / name
            write_input(path, content)
        result = outcome(lambda: read_g10(directory), WorkloadError, names=[directory])
        if isinstance(result, WorkloadError):
            assert result.path.parent == directory or result.path == directory, result
            assert result.path == directory or result.path.name in files or \
                result.path.name in _OPTIONAL, result
            if result.line is not None:
                lines = pathlib.Path(result.path).read_text(errors="replace").splitlines()
                assert 1 <= result.line <= len(lines), result
            return
    check_graph(result)
    kernels = files["kernels.config"]
    written = kernels.decode(errors="replace") if isinstance(kernels, bytes) else kernels
    assert len(result.ops) == len(re.findall(r"^\s*Kernel ID:", written, re.MULTILINE))
    assert all(op.duration_s is not None for op in result.ops)


# The directories the command line's fuzz test reads.
DIRECTORIES = _directories(corrupt=False) | _directories(corrupt=True)

test_mutated_files, test_mutated_files_large = fuzz_tests(
    check_directory, _directories(corrupt=False), 120)
test_random_bytes, test_random_bytes_large = fuzz_tests(
    check_directory, _directories(corrupt=True), 40)


# What fuzzing found, each kept as a case: (what, the file changed, its text, the line the
# error names).
FINDINGS = [
    ("kernels.config not UTF-8", "kernels.config", b"Kernel ID: 0\x80", None),
    ("kernel times not UTF-8", "cudnn4.txt", b"\xff\xfe", None),
    ("a time with two decimal points", "cudnn4.txt", "0 1..2 ms\n", 1),
    ("an infinite time", "cudnn4.txt", _TIMES.replace("0.500000", "1e999"), 1),
    ("a kernel id of more digits than Python converts", "kernels.config",
     _KERNELS.replace("Kernel ID: 0,", "Kernel ID: " + "0" * 5000 + ","), 1),
    ("a tensor size of more digits than Python converts", "kernels.config",
     _KERNELS.replace("Size in byte: 16384", "Size in byte: " + "1" * 5000, 1), 7),
]


@pytest.mark.parametrize("what, name, text, line", FINDINGS, ids=[f[0] for f in FINDINGS])
def test_finding(tmp_path, what, name, text, line):
    (tmp_path / "kernels.config").write_text(_KERNELS)
    (tmp_path / "cudnn4.txt").write_text(_TIMES)
    path = tmp_path / name
    refused(lambda _: read_g10(tmp_path), path, text, WorkloadError,
            f"{path}:{line}:" if line else f"{path}:")
