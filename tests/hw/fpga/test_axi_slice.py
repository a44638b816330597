"""The FPGA top through cocotbext-axi (testbench: sim/tb/axi_slice_tb.py): every test under
Verilator and Icarus with random pauses on every channel, and under Verilator around the
slice with the pipelined trigger; one short run without pauses,
the register windows on a build with a small engine, long random runs marked slow."""

import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.sim.designs import (AXI_SLICE_MODULE, PIPELINED_TRIGGER_SLICE, TRIGGER_SLICE,
                                axi_slice_verilog, config_environment)
from matndp.sim.runner import run_cocotb


# The exports and builds of the top are shared with test_top.py's export tests on one worker.
pytestmark = pytest.mark.xdist_group("axi_slice")


TESTS = ["random_traffic", "register_errors", "unsupported_bursts", "memory_errors",
         "reset_mid_traffic"]
# An engine whose windows are small enough to write and read every word in a short run,
# with as few units as it allows, so that its export and its run under Icarus are quick.
SMALL_ENGINE = NDPConfig(trigger=TriggerConfig(filter_entries=4),
                         engine=EngineConfig(slots=2, instruction_words=64, argument_blocks=1,
                                             scratchpad_bytes=256, divide_units=1, fma_units=2,
                                             reduce_tree=False, in_flight=1,
                                             memory_first=False))


def _run(simulator, testcase, config=TRIGGER_SLICE, **env):
    run_cocotb(sources=[axi_slice_verilog(config, simulator=simulator)], toplevel=AXI_SLICE_MODULE,
               test_module="matndp.sim.tb.axi_slice_tb", simulator=simulator, testcase=testcase,
               extra_env={**config_environment(config), **env})


@pytest.mark.parametrize("simulator", ["verilator", "icarus"])
def test_axi_top(simulator):
    operations = 12 if simulator == "verilator" else 4
    _run(simulator, TESTS, MATNDP_SEED=1, MATNDP_OPERATIONS=operations, MATNDP_PRESSURE="random")


def test_axi_top_with_the_pipelined_trigger():
    """The FPGA build (the trigger's request side pipelined), as `make synth` times it; under
    Icarus, which needs no build of a second top."""
    _run("icarus", TESTS, config=PIPELINED_TRIGGER_SLICE, MATNDP_SEED=3, MATNDP_OPERATIONS=4,
         MATNDP_PRESSURE="random")


def test_traffic_without_pauses():
    _run("verilator", "random_traffic", MATNDP_SEED=2, MATNDP_OPERATIONS=12, MATNDP_PRESSURE="none")


# Icarus compiles the top with an engine in seconds, where Verilator's build takes minutes:
# the default suite runs it under Icarus, the slow suite under Verilator too.
@pytest.mark.parametrize("simulator", ["icarus", pytest.param("verilator", marks=pytest.mark.slow)])
def test_windows_and_errors_with_an_engine(simulator):
    _run(simulator, ["windows", "register_errors", "random_traffic"], config=SMALL_ENGINE,
         MATNDP_SEED=4, MATNDP_OPERATIONS=6, MATNDP_PRESSURE="random")


@pytest.mark.slow
@pytest.mark.parametrize("simulator", ["verilator", "icarus"])
@pytest.mark.parametrize("seed", [21, 22, 23])
def test_long_random_traffic(simulator, seed):
    _run(simulator, ["random_traffic", "memory_errors"], MATNDP_SEED=seed,
         MATNDP_OPERATIONS=200 if simulator == "verilator" else 30, MATNDP_PRESSURE="random")
