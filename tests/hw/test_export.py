"""Verilog export is reproducible and lint-clean."""

import subprocess
import sys

import pytest

from matndp.hw.config import NDPConfig
from matndp.sim.designs import ndp_slice_verilog
from matndp.sim.fpga_flow.lint import lint


# Exporting the slice with its engine takes a minute: the tests share the export the
# simulation tests of the default slice make (one per process, sim/designs/files.py), on the
# worker that runs those, and only the command line's export, in a process of its own, makes
# a second one.
pytestmark = pytest.mark.xdist_group("engine_slice")


@pytest.fixture
def exported():
    return ndp_slice_verilog(NDPConfig()).read_text()


def test_the_command_lines_export_is_byte_identical_across_processes_and_has_no_paths(
        tmp_path, exported):
    output = tmp_path / "out.v"
    result = subprocess.run([sys.executable, "-m", "matndp.sim.cli", "export", "--output", str(output)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert output.read_text() == exported
    assert "/work" not in exported and "/home" not in exported and "/root" not in exported \
        and ".py:" not in exported


def test_exported_verilog_is_lint_clean(tmp_path, exported):
    path = tmp_path / "ndp_slice.v"
    path.write_text(exported)
    assert lint(path) == 0


def test_lint_fails_on_a_real_problem(tmp_path):
    path = tmp_path / "ndp_slice.v"
    # A multiply-driven net: no waiver covers it.
    path.write_text("module ndp_slice(input a, input b, output y);\n"
                    "  assign y = a;\n  assign y = b;\nendmodule\n")
    assert lint(path) == 1
