"""The command line's answer to fuzzed files (tests/fuzzing.py): every file the fuzz tests
of a reader make that the reader refuses ends the command that reads it with exit code 2
and the reader's message on standard error as one line, ``matndp COMMAND: error: ...``,
naming the file at fault (an assembly error may add indented lines saying where a file was
included or a macro used) — no traceback. Files the readers take are left to their own
fuzz tests (the commands would go on to run a model)."""

import contextlib
import io
import pathlib
import tempfile

from hypothesis import reject, strategies as st

from matndp.host.calibration import load_calibration
from matndp.host.kernels.assembler import AssemblyError, assemble_file
from matndp.host.kernels.image import KernelFileError, load_image
from matndp.host.tier.presets import ConfigError, load_setup
from matndp.host.workload import WorkloadError, read_g10, read_torch_trace, read_workload
from matndp.sim.sweep import SpecError, load_spec

from tests.fuzzing import fuzz_tests, time_limit, write_input
from tests.host import test_calibration_fuzz as calibration
from tests.host.kernels import test_assembler_fuzz as assembler
from tests.host.kernels import test_image_fuzz as kernel_file
from tests.host.tier import test_presets_fuzz as presets
from tests.host.workload import test_format_fuzz as workload
from tests.host.workload import test_g10_fuzz as g10
from tests.host.workload import test_torch_trace_fuzz as torch_trace
from tests.sim.sweep import test_spec_fuzz as sweep

from .commands import exit_code


def _kernel(folder, case):
    main, changed = case
    for name, text in assembler.library_with(changed).items():
        write_input(folder / name, text)
    return folder / main


def _file(name):
    return lambda folder, content: write_input(folder / name, content)


def _directory(folder, files):
    for name, content in files.items():
        write_input(folder / name, content)
    return folder


# format: (cases, how a case is written to a folder, the reader and its error, the command:
# its words and its arguments with {} for the path written)
FORMATS = {
    "assembly": (assembler.SOURCES, _kernel, assemble_file, AssemblyError,
                 ("kernel asm", "{} --output {}.ndpk")),
    "kernel file": (kernel_file.FILES, _file("k.ndpk"), load_image, KernelFileError,
                    ("kernel disasm", "{}")),
    "workload": (workload.FILES, _file("w.json"), read_workload, WorkloadError,
                 ("tier export", "--trace workload:{} --output {}.out.json")),
    "g10": (g10.DIRECTORIES, _directory, read_g10, WorkloadError,
            ("tier export", "--trace g10:{} --output {}.out.json")),
    "torch": (torch_trace.FILES, _file("t.json"), read_torch_trace, WorkloadError,
              ("tier export", "--trace torch:{} --output {}.out.json")),
    "setup": (presets.FILES, _file("s.toml"), load_setup, ConfigError, ("tier run", "--config {}")),
    "sweep": (sweep.FILES, _file("s.toml"), load_spec, SpecError,
              ("sweep", "{} --no-progress --no-plot --output {}.jsonl")),
    "calibration": (calibration.FILES, _file("c.json"), load_calibration, ValueError,
                    ("gpu run", "--model resnet50 --gpu a100 --batch 2 --calibration {}")),
}


def _run(argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), time_limit():
        code = exit_code(argv)
    return code, stderr.getvalue()


def check_refused_file(case):
    name, content = case
    _, write, read, error, command = FORMATS[name]
    with tempfile.TemporaryDirectory() as folder:
        path = write(pathlib.Path(folder), content)
        try:
            with time_limit():
                read(path)
        except error:
            pass
        else:
            reject()          # taken: its reader's fuzz test judges the result
        words, arguments = command
        code, stderr = _run(words.split() + arguments.format(path, path).split())
        first, *rest = stderr.splitlines()
        assert code == 2, stderr
        # the file at fault: the one given, or one it includes, beside it
        assert first.startswith(f"matndp {words}: error: ") and folder in first, stderr
        assert all(line.startswith("  ") for line in rest), stderr


_CASES = st.one_of(*(cases.map(lambda case, name=name: (name, case))
                     for name, (cases, *_) in FORMATS.items()))
test_refused_file, test_refused_file_large = fuzz_tests(check_refused_file, _CASES, 70)
