"""The NDP slice through cocotb (testbench: sim/tb/ndp_slice_tb.py): the default
configuration under both simulators, three others (the pipelined FPGA build among them)
under Verilator and, briefly, one of them under Icarus; and its register bus in Amaranth's
simulator."""

import pytest
from amaranth.sim import Simulator

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.csr_map import MAGIC
from matndp.hw.ndp_slice import NDPSlice
from matndp.sim.designs import PIPELINED_TRIGGER_SLICE, config_environment, ndp_slice_verilog
from matndp.sim.runner import run_cocotb
from tests.hw.bus.models import REGISTER_LATENCY, Initiator


SIMULATORS = ["verilator", "icarus"]
CONFIGS = {
    "default": NDPConfig(engine=None),
    # Wide sectors, few entries, a small tag space.
    "wide": NDPConfig(sector_bytes=64, id_width=4, trigger=TriggerConfig(filter_entries=4),
                      engine=None),
    # One entry, narrow sectors, four tags, short event queues, a longer address and
    # short counters.
    "narrow": NDPConfig(addr_width=48, sector_bytes=16, id_width=2, counter_width=16,
                        trigger=TriggerConfig(filter_entries=1, event_queue_depth=3), engine=None),
    # The FPGA build: the trigger's request side pipelined.
    "pipelined": PIPELINED_TRIGGER_SLICE,
}
# (configuration, simulator) pairs the behaviour tests run on: every configuration under
# Icarus (no build to wait for), the default one under Verilator too; the other
# configurations under Verilator, and their streams, in the slow suite.
OTHER_CONFIGS = ("wide", "narrow", "pipelined")
RUNS = [("default", "verilator"), *((config, "icarus") for config in ("default", *OTHER_CONFIGS))]
SLOW_RUNS = [(config, "verilator") for config in OTHER_CONFIGS]
BEHAVIOUR = ["csr_map_and_bus_errors", "full_event_queue_stalls_only_the_gpu", "reused_read_id_is_flagged",
             "stall_counter_under_random_back_pressure"]


def _run(config, simulator, testcase, **env):
    config = CONFIGS[config]
    run_cocotb(sources=[ndp_slice_verilog(config, simulator=simulator)], toplevel="ndp_slice", test_module="matndp.sim.tb.ndp_slice_tb",
               simulator=simulator, testcase=testcase, extra_env={**config_environment(config), **env})


@pytest.mark.parametrize("config, simulator", [
    *RUNS, *(pytest.param(*run, marks=pytest.mark.slow) for run in SLOW_RUNS)])
@pytest.mark.parametrize("testcase", BEHAVIOUR)
def test_slice_behaviour(config, simulator, testcase):
    _run(config, simulator, testcase)


# Under Icarus, a stream of one tile takes ten seconds: by default the default
# configuration's stream under random back-pressure on both simulators; the streams
# without pauses, and the other configurations', in the slow suite.
@pytest.mark.parametrize("config, simulator, pressure", [
    (config, simulator, pressure) if config == "default" and pressure == "random"
    else pytest.param(config, simulator, pressure, marks=pytest.mark.slow)
    for pressure in ("none", "random")
    for config, simulator in [("default", "verilator"), ("default", "icarus"), *SLOW_RUNS]])
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


def test_windows_without_targets_answer_with_errors():
    """In Amaranth's simulator: the slice's decoder refuses every access to the windows,
    which have no target in the slice, a cycle after the strobe, and still answers registers
    after the register file's latency."""
    config = NDPConfig(trigger=TriggerConfig(filter_entries=2), engine=None)
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
    assert initiator.latencies == [REGISTER_LATENCY] + [1] * 4 * len(registers.windows) + [REGISTER_LATENCY]


def test_entries_beyond_32_reach_the_high_mask_words():
    """In Amaranth's simulator, 40 entries and 32-bit addresses: entry 37's range takes one
    word each for base and size, its HIT_DONE and IRQ_ENABLE bits are bit 5 of the _HI words,
    and a write in its range raises the interrupt."""
    config = NDPConfig(addr_width=32, trigger=TriggerConfig(filter_entries=40), engine=None)
    dut = NDPSlice(config)
    registers = dut.register_map
    initiator = Initiator(dut.csr)
    entry = "entry37."

    async def bench(ctx):
        ctx.set(dut.mem.req.ready, 1)
        ctx.set(dut.events.ready, 1)
        for name, value in (("base_lo", 0xFFFF_0000), ("size_lo", 0x100), ("expected", 1),
                            ("ctrl", 0b011)):
            assert not await initiator.write(ctx, registers[entry + name].address, value)
        assert await initiator.write(ctx, registers[entry + "ctrl"].address + 8, 1)   # no BASE_HI
        assert not await initiator.write(ctx, registers["irq_enable_hi"].address, 0xFF)
        assert await initiator.read(ctx, registers["irq_enable_hi"].address) == (0xFF, False)
        assert await initiator.read(ctx, registers["complete_hi"].address) == (0, False)
        assert not ctx.get(dut.irq)
        ctx.set(dut.gpu.req.payload, {"addr": 0xFFFF_0040, "write": 1, "data": 7, "mask": 0xF, "id": 0})
        ctx.set(dut.gpu.req.valid, 1)
        while True:
            _, _, ready = await ctx.tick().sample(dut.gpu.req.ready)
            if ready:
                break
        ctx.set(dut.gpu.req.valid, 0)
        await initiator.idle(ctx, 8)
        assert await initiator.read(ctx, registers["complete_hi"].address) == (1 << 5, False)
        assert await initiator.read(ctx, registers["complete"].address) == (0, False)
        assert await initiator.read(ctx, registers[entry + "hits"].address) == (1, False)
        assert ctx.get(dut.irq)
        assert not await initiator.write(ctx, registers["irq_enable_hi"].address, 0xDF)
        await initiator.idle(ctx, 1)
        assert not ctx.get(dut.irq)
    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()


def test_no_request_meets_a_new_range_half_formed():
    """In Amaranth's simulator: a request in the cycle after a SIZE write to an enabled entry
    is acknowledged (the first in which the entry holds the new size) is not matched against
    the new size with the old end (nor any other mix); the next cycle's request is matched
    against the new range."""
    config = NDPConfig(trigger=TriggerConfig(filter_entries=2), engine=None)
    dut = NDPSlice(config)
    registers = dut.register_map
    initiator = Initiator(dut.csr)
    entry = "entry0."
    events = []

    async def bench(ctx):
        ctx.set(dut.mem.req.ready, 1)
        ctx.set(dut.events.ready, 1)
        for name, value in (("base_lo", 0x1000), ("size_lo", 0x1000), ("ctrl", 0b011)):
            assert not await initiator.write(ctx, registers[entry + name].address, value)
        # [0x1000, 0x2000) becomes [0x1000, 0x1100); 0x1800 lies only in the old range.
        # The write's strobe by hand, so that the first request comes in the cycle after its
        # acknowledge.
        ctx.set(dut.csr.addr, registers[entry + "size_lo"].address)
        ctx.set(dut.csr.w_data, 0x100)
        ctx.set(dut.csr.w_en, 1)
        await ctx.tick()
        ctx.set(dut.csr.w_en, 0)
        for _ in range(REGISTER_LATENCY - 1):
            await ctx.tick()
        assert ctx.get(dut.csr.ack)
        await ctx.tick()
        for address, request_id in ((0x1800, 1), (0x1040, 2)):
            ctx.set(dut.gpu.req.payload, {"addr": address, "write": 1, "data": request_id,
                                          "mask": 0xF, "id": request_id})
            ctx.set(dut.gpu.req.valid, 1)
            _, _, ready = await ctx.tick().sample(dut.gpu.req.ready)
            assert ready
        ctx.set(dut.gpu.req.valid, 0)
        for _ in range(8):
            _, _, valid, payload = await ctx.tick().sample(dut.events.valid, dut.events.payload)
            if valid:
                events.append((payload.addr, payload.offset))
    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    assert events == [(0x1040, 0x40)]
