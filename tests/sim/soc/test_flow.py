"""The SoC flow: the firmware's lines parsed into results, and (``-m slow``) the whole SoC
built and run under Verilator with every kernel passing, and its waveform."""

import json
import subprocess
import sys

import pytest
import pywellen

from matndp.sim.runner import SimulationFailed, build_root
from matndp.sim.soc.firmware_header import SOC_KERNELS
from matndp.sim.soc import flow
from matndp.sim.soc.flow import KernelLine, SoCRun, missing_tools, parse_output


OUTPUT = """[clocker] sys_clk: freq_hz=1000000, phase_deg=0
kernel bias_relu: pass, 8 sectors, 412 cycles (DMA 120 cycles)
kernel bn_stats: FAIL, word 3 at 0x00100400 is 0x00000000, expected 0x3f800000, 16 sectors, 900 cycles (DMA 200 cycles)
soc: 1 of 2 kernels passed
- Finished
"""


def test_the_firmware_lines_become_results_and_the_simulator_lines_are_left_out():
    kernels, summary, lines = parse_output(OUTPUT)
    assert kernels == [
        KernelLine("bias_relu", True, "", 8, 412, 120),
        KernelLine("bn_stats", False, "word 3 at 0x00100400 is 0x00000000, expected 0x3f800000",
                   16, 900, 200)]
    assert summary == (1, 2)
    assert lines == OUTPUT.splitlines()[1:4]


def test_a_run_passes_only_when_every_kernel_line_and_the_summary_say_so():
    kernels, _, lines = parse_output(OUTPUT)
    passing = [kernels[0], KernelLine("bn_stats", True, "", 16, 900, 200)]
    assert SoCRun(passing, 2, 2, lines, 0.0, 0.0, False).ok
    assert not SoCRun(kernels, 1, 2, lines, 0.0, 0.0, False).ok
    assert not SoCRun(passing[:1], 2, 2, lines, 0.0, 0.0, False).ok
    assert not SoCRun([], 0, 0, [], 0.0, 0.0, False).ok


def test_the_trace_switch_marks_inside_a_line_are_left_out():
    traced = OUTPUT.replace("kernel bias_relu", "<DUMP ON>kernel bias_relu").replace(
        "kernel bn_stats", "<DUMP OFF>kernel bn_stats")
    assert parse_output(traced) == parse_output(OUTPUT)


def test_output_without_a_summary_gives_none():
    assert parse_output("kernel x: garbled\n")[1] is None


def test_a_firmware_that_does_not_compile_fails_naming_its_first_error(monkeypatch, tmp_path,
                                                                       capsys):
    stderr = ("main.c: In function 'main':\n"
              "main.c:12:5: error: 'x' undeclared (first use in this function)\n"
              "main.c:13:5: error: expected ';' before 'return'\n")
    monkeypatch.setattr(flow.subprocess, "run", lambda step, **_: subprocess.CompletedProcess(
        step, 1, "", stderr))
    header = tmp_path / "ndp_firmware.h"
    with pytest.raises(SimulationFailed) as failure:
        flow.compile_firmware(header, tmp_path, tmp_path / "firmware")
    assert str(failure.value) == ("the firmware's build failed: main.c:12:5: error: 'x' "
                                  "undeclared (first use in this function)")
    assert stderr in capsys.readouterr().err   # the whole of it, for the run's log


def _soc_sim(*flags):
    # As `make soc-sim` runs it, in a process of its own, with its model reused while unchanged.
    done = subprocess.run([sys.executable, "-m", "matndp.sim.cli", "soc-sim", "--build",
                           str(build_root() / "soc"), "--json", *flags],
                          capture_output=True, text=True)
    return done, json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.skipif(bool(missing_tools()), reason="make soc-setup has not run")
def test_the_soc_runs_every_kernel_through_the_slice():
    done, result = _soc_sim()
    assert [k["kernel"] for k in result["results"]] == [k.name for k in SOC_KERNELS]
    assert done.returncode == 0 and result["ok"], result
    assert all(k["cycles"] > 0 and k["sectors"] > 0 for k in result["results"])


@pytest.mark.slow
@pytest.mark.skipif(bool(missing_tools()), reason="make soc-setup has not run")
def test_the_waveform_is_whole_and_shows_each_kernels_interrupt():
    # The model ends at the firmware's $finish, so the FST writer is closed and the file
    # readable; the slice raised irq once per kernel.
    done, result = _soc_sim("--waveform")
    assert done.returncode == 0 and result["ok"], result
    dump = pywellen.Waveform(result["waveform"])
    irq = [var for var in dump.all_vars() if var.full_name.endswith("ndp_slice_axi.irq")]
    assert len(irq) == 1, [var.full_name for var in irq]
    values = [int(value) for _, value in irq[0].tv]
    rises = sum(1 for before, after in zip(values, values[1:]) if (before, after) == (0, 1))
    assert rises == len(SOC_KERNELS)
