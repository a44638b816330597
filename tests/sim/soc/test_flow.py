"""The SoC flow: the firmware's lines parsed into results, and (``-m slow``) the whole SoC
built and run under Verilator with every kernel passing."""

import json
import subprocess
import sys

import pytest

from matndp.sim.runner import build_root
from matndp.sim.soc.firmware_header import SOC_KERNELS
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


def test_output_without_a_summary_gives_none():
    assert parse_output("kernel x: garbled\n")[1] is None


@pytest.mark.slow
@pytest.mark.skipif(bool(missing_tools()), reason="make soc-setup has not run")
def test_the_soc_runs_every_kernel_through_the_slice():
    # As `make soc-sim` runs it, in a process of its own, with its model reused while unchanged.
    done = subprocess.run([sys.executable, "-m", "matndp.sim.cli", "soc-sim", "--build",
                           str(build_root() / "soc"), "--json"], capture_output=True, text=True)
    result = json.loads(done.stdout)
    assert [k["kernel"] for k in result["results"]] == [k.name for k in SOC_KERNELS]
    assert done.returncode == 0 and result["ok"], result
    assert all(k["cycles"] > 0 and k["sectors"] > 0 for k in result["results"])
