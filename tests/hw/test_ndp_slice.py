"""The NDP slice under both simulators, through cocotb (testbench: sim/tb/ndp_slice_tb.py)."""

import pytest

from matndp.sim.designs import ndp_slice_verilog
from matndp.sim.runner import run_cocotb


SIMULATORS = ["verilator", "icarus"]


def _run(simulator, testcase, **env):
    run_cocotb(sources=[ndp_slice_verilog()], toplevel="ndp_slice", test_module="matndp.sim.tb.ndp_slice_tb",
               simulator=simulator, testcase=testcase, extra_env=env)


@pytest.mark.parametrize("simulator", SIMULATORS)
@pytest.mark.parametrize("testcase", ["csr_map_and_bus_errors", "full_event_queue_stalls_only_the_gpu",
                                      "reused_read_id_is_flagged"])
def test_slice_behaviour(simulator, testcase):
    _run(simulator, testcase)


@pytest.mark.parametrize("simulator", SIMULATORS)
@pytest.mark.parametrize("pressure", ["none", "random"])
def test_dnn_stream(simulator, pressure):
    tiles = 2 if simulator == "verilator" else 1
    _run(simulator, "dnn_stream", MATNDP_PRESSURE=pressure, MATNDP_TILES=tiles,
         MATNDP_SEED=7 if pressure == "random" else 1)


@pytest.mark.slow
@pytest.mark.parametrize("simulator", SIMULATORS)
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_dnn_stream_long(simulator, seed):
    _run(simulator, "dnn_stream", MATNDP_PRESSURE="random", MATNDP_TILES=16, MATNDP_SEED=seed)
