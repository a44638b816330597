"""The NDP slice through cocotb (testbench: sim/tb/ndp_slice_tb.py): the default
configuration under both simulators, two others under Verilator and, briefly, one of
them under Icarus."""

import pytest

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.sim.designs import config_environment, ndp_slice_verilog
from matndp.sim.runner import run_cocotb


SIMULATORS = ["verilator", "icarus"]
CONFIGS = {
    "default": NDPConfig(),
    # Wide sectors, few entries, a small tag space.
    "wide": NDPConfig(sector_bytes=64, id_width=4, trigger=TriggerConfig(filter_entries=4)),
    # One entry, narrow sectors, four tags, short event queues, a longer address and
    # short counters.
    "narrow": NDPConfig(addr_width=48, sector_bytes=16, id_width=2, counter_width=16,
                        trigger=TriggerConfig(filter_entries=1, event_queue_depth=3)),
}
# (configuration, simulator) pairs the behaviour tests run on.
RUNS = [("default", "verilator"), ("default", "icarus"), ("wide", "verilator"), ("narrow", "verilator")]
BEHAVIOUR = ["csr_map_and_bus_errors", "full_event_queue_stalls_only_the_gpu", "reused_read_id_is_flagged",
             "stall_counter_under_random_back_pressure"]


def _run(config, simulator, testcase, **env):
    config = CONFIGS[config]
    run_cocotb(sources=[ndp_slice_verilog(config)], toplevel="ndp_slice", test_module="matndp.sim.tb.ndp_slice_tb",
               simulator=simulator, testcase=testcase, extra_env={**config_environment(config), **env})


@pytest.mark.parametrize("config, simulator", RUNS)
@pytest.mark.parametrize("testcase", BEHAVIOUR)
def test_slice_behaviour(config, simulator, testcase):
    _run(config, simulator, testcase)


@pytest.mark.parametrize("config, simulator", RUNS)
@pytest.mark.parametrize("pressure", ["none", "random"])
def test_dnn_stream(config, simulator, pressure):
    tiles = 2 if simulator == "verilator" else 1
    _run(config, simulator, "dnn_stream", MATNDP_PRESSURE=pressure, MATNDP_TILES=tiles,
         MATNDP_SEED=7 if pressure == "random" else 1)


def test_narrow_configuration_under_icarus():
    _run("narrow", "icarus", ["dnn_stream", "stall_counter_under_random_back_pressure"],
         MATNDP_PRESSURE="random", MATNDP_TILES=1, MATNDP_SEED=5)


@pytest.mark.slow
@pytest.mark.parametrize("simulator", SIMULATORS)
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_dnn_stream_long(simulator, seed):
    _run("default", simulator, "dnn_stream", MATNDP_PRESSURE="random", MATNDP_TILES=16, MATNDP_SEED=seed)
