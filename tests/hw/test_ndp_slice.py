"""The NDP slice under both simulators, through cocotb (testbench: sim/tb/ndp_slice_tb.py), and
its register bus in Amaranth's simulator."""

import pytest
from amaranth.sim import Simulator

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.csr_map import MAGIC
from matndp.hw.ndp_slice import NDPSlice
from matndp.sim.designs import ndp_slice_verilog
from matndp.sim.runner import run_cocotb
from tests.hw.bus.models import Initiator


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


def test_windows_without_targets_answer_with_errors():
    """In Amaranth's simulator: the slice's decoder refuses every access to the windows,
    which have no target in the slice, and still answers registers after one cycle."""
    config = NDPConfig(trigger=TriggerConfig(filter_entries=2))
    dut = NDPSlice(config)
    registers = dut.register_map
    initiator = Initiator(dut.csr)
    results = []

    async def bench(ctx):
        assert await initiator.read(ctx, registers["id"].address) == (MAGIC, False)
        for window in registers.windows:
            for address in (window.base, window.end - 4):
                results.append(await initiator.write(ctx, address, 0x1234_5678))
                results.append((await initiator.read(ctx, address))[1])
        assert await initiator.read(ctx, registers["version"].address) == (registers["version"].reset_value,
                                                                           False)
    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    assert results == [True] * 4 * len(registers.windows)
    assert initiator.latencies == [1] * len(initiator.latencies)
