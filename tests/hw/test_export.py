"""Verilog export is reproducible and lint-clean."""

import subprocess
import sys

import pytest

from matndp.hw.config import NDPConfig
from matndp.sim.designs import ndp_slice_verilog
from matndp.sim.fpga_flow.lint import lint


# Exporting the slice with its engine takes a minute: the tests share the export the
# simulation tests of the default slice make (sim/designs/files.py), on the worker that runs
# those.
pytestmark = pytest.mark.xdist_group("engine_slice")


@pytest.fixture
def exported():
    return ndp_slice_verilog(NDPConfig()).read_text()


def test_the_export_names_no_paths(exported):
    assert "/work" not in exported and "/home" not in exported and "/root" not in exported \
        and ".py:" not in exported


# A second export of the slice with its engine takes half a minute: the default suite checks
# that exports are the same across processes on the slice's AXI top (tests/hw/fpga/test_top.py).
@pytest.mark.slow
def test_the_command_lines_export_is_byte_identical_across_processes(tmp_path, exported):
    output = tmp_path / "out.v"
    result = subprocess.run([sys.executable, "-m", "matndp.sim.cli", "export", "--output", str(output)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert output.read_text() == exported


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
