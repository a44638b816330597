"""cocotb tests of the NDP slice's trigger path.

Parameters come from the environment (set by ``sim.runner.run_cocotb``'s ``extra_env``):

MATNDP_SEED       traffic and back-pressure seed
MATNDP_TILES      output tiles of the DNN layer in the stream test
MATNDP_PRESSURE   "none" or "random" back-pressure on every stream
MATNDP_REPORT     if set, a JSON file for measurements (cycles, wall time, counters)
"""

import json
import os
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles as WaitCycles, ReadOnly, RisingEdge

from matndp.hw.config import NDPConfig
from matndp.hw.layouts import request_layout, response_layout, trigger_event_layout
from matndp.host.runtime import FilterRange, NDPRuntime, RangeError
from matndp.host.csr_bus import CSRAccessError
from matndp.sim.csr_adapter import SimulatedCSRBus, call_runtime
from matndp.sim.drivers.csr import CSRDriver
from matndp.sim.drivers.packing import StructCodec
from matndp.sim.drivers.stream import ClockCycles, CycleLoop, StreamSink, StreamSource
from matndp.sim.memory_model import MemoryModel, MemoryTiming
from matndp.sim.trigger_scenario import build_scenario, golden_replay


CLOCK_NS = 10


def _env(name, default):
    return type(default)(os.environ.get(name, default))


class SliceBench:
    """The NDP slice with a GPU-side driver, a memory model, an event sink and the host
    runtime on the CSR bus."""

    def __init__(self, dut, config, *, pressure, seed, memory_timing=None):
        self.dut = dut
        self.config = config
        self.cycles = ClockCycles(CLOCK_NS)
        self.loop = CycleLoop(dut.clk, self.cycles)
        random_pressure = pressure == "random"
        self.gpu = self.loop.add(StreamSource(
            dut, "gpu__req", codec=StructCodec(request_layout(config)),
            pause=0.3 if random_pressure else 0.0, seed=seed))
        self.gpu_responses = self.loop.add(StreamSink(
            dut, "gpu__resp", codec=StructCodec(response_layout(config)),
            pause=0.3 if random_pressure else 0.0, seed=seed + 1))
        self.events = self.loop.add(StreamSink(
            dut, "events", codec=StructCodec(trigger_event_layout(config)),
            pause=0.5 if random_pressure else 0.0, seed=seed + 2))
        if memory_timing is None:
            memory_timing = MemoryTiming(latency=12, request_pause=0.3, response_pause=0.3, reorder=True) \
                if random_pressure else MemoryTiming(latency=12)
        self.memory = self.loop.add(MemoryModel(dut, config, memory_timing, seed=seed + 3))
        self.csr = CSRDriver(dut, dut.clk)
        self.runtime = NDPRuntime(SimulatedCSRBus(self.csr), config)

    async def start(self):
        cocotb.start_soon(Clock(self.dut.clk, CLOCK_NS, unit="ns").start())
        self.dut.rst.value = 1
        await WaitCycles(self.dut.clk, 3)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)
        cocotb.start_soon(self.loop.run())

    async def drain(self, expected_responses, limit=100_000):
        for _ in range(limit):
            if len(self.gpu_responses.items) >= expected_responses and self.memory.idle:
                break
            await RisingEdge(self.dut.clk)
        else:
            raise AssertionError(f"only {len(self.gpu_responses.items)} of {expected_responses} "
                                 f"read responses arrived within {limit} cycles")
        # Let the event queues empty.
        await WaitCycles(self.dut.clk, 4 * self.config.trigger.event_queue_depth + 20)


def _report(values):
    path = os.environ.get("MATNDP_REPORT")
    if path:
        with open(path, "w") as file:
            json.dump(values, file, indent=2)


@cocotb.test()
async def csr_map_and_bus_errors(dut):
    """Identity registers, read-back of programmed entries, and bus errors for unmapped,
    misaligned and read-only accesses."""
    config = NDPConfig()
    bench = SliceBench(dut, config, pressure="none", seed=1)
    await bench.start()
    runtime = bench.runtime
    found = await call_runtime(runtime.probe)
    assert found["filter_entries"] == config.trigger.filter_entries

    entry = FilterRange(0xAB_CDEF_0000, 0x1_0000_0020, on_write=True, on_read=True,
                        kernel_pc=0x1234, arg_index=7, expected=99)
    await call_runtime(runtime.program, 5, entry)
    base = 0x100 + 5 * 0x40
    readback = [(await bench.csr.read(base + offset))[0] for offset in range(0, 0x24, 4)]
    assert readback == [0b111, 0xCDEF_0000, 0xAB, 0x0000_0020, 0x1, 0x1234, 7, 99, 0], readback

    for address in (0x020, 0x0FC, 0x102, 0x100 + config.trigger.filter_entries * 0x40, 0x7FC):
        value, error = await bench.csr.read(address)
        assert error, f"read of unmapped address {address:#x} was not flagged"
        error = await bench.csr.write(address, 0xFFFF_FFFF)
        assert error, f"write to unmapped address {address:#x} was not flagged"
    for name in ("id", "config", "hit_done"):
        address = runtime.registers[name].address
        before, _ = await bench.csr.read(address)
        assert await bench.csr.write(address, 0x5555_5555), f"write to read-only {name} not flagged"
        after, error = await bench.csr.read(address)
        assert after == before and not error

    # The runtime surfaces bus errors as exceptions.
    try:
        await call_runtime(bench.runtime.bus.read, 0x7FC)
    except CSRAccessError:
        pass
    else:
        raise AssertionError("runtime read of an unmapped address raised no error")


@cocotb.test()
async def dnn_stream(dut):
    """A ResNet-50 convolution's output stream mixed with other traffic: pass-through is
    exact and in order, events appear exactly for in-range accesses, counters agree. Without
    back-pressure it also measures the added latency and the sustained rate."""
    config = NDPConfig()
    seed = _env("MATNDP_SEED", 1)
    pressure = os.environ.get("MATNDP_PRESSURE", "none")
    scenario = build_scenario(config, tiles=_env("MATNDP_TILES", 2), seed=seed)
    golden = golden_replay(scenario)
    bench = SliceBench(dut, config, pressure=pressure, seed=seed)
    for addr, array in scenario.preload:
        bench.memory.store.load(addr, array)
    await bench.start()
    runtime = bench.runtime
    for index, entry in scenario.disabled_entries.items():
        await call_runtime(runtime.program, index, entry)
        await call_runtime(runtime.disable, index)
    for index, entry in scenario.entries.items():
        await call_runtime(runtime.program, index, entry)
    await call_runtime(runtime.clear_counters)

    started = time.perf_counter()
    first_cycle = bench.cycles.now()
    await bench.gpu.send(scenario.requests)
    reads = [i for i, request in enumerate(scenario.requests) if not request["write"]]
    await bench.drain(len(reads))
    cycles = bench.cycles.now() - first_cycle
    wall = time.perf_counter() - started

    # Every request reaches memory unchanged and in order.
    assert len(bench.memory.requests) == len(scenario.requests)
    for index, (seen, sent) in enumerate(zip(bench.memory.requests, scenario.requests)):
        assert seen == sent, f"request {index} changed on its way: sent {sent}, memory saw {seen}"

    # Every read gets exactly one response with the right data; pair them by tag.
    outstanding = {}
    for index in reads:
        outstanding.setdefault(scenario.requests[index]["id"], []).append(index)
    response_order = []
    for response in bench.gpu_responses.items:
        queue = outstanding.get(response["id"])
        assert queue, f"response with id {response['id']} matches no outstanding read"
        index = queue.pop(0)
        assert response["data"] == golden.read_data[index], f"read {index} returned wrong data"
        response_order.append(index)
    assert len(response_order) == len(reads)

    # Events: writes in request order, reads in response order, each with its data.
    write_events = [event for event in bench.events.items if event["write"]]
    read_events = [event for event in bench.events.items if not event["write"]]
    assert write_events == golden.write_events, "write events differ from the golden model"
    expected_read_events = [golden.read_events[i] for i in response_order if i in golden.read_events]
    assert read_events == expected_read_events, "read events differ from the golden model"

    # Counters through the runtime.
    for index in scenario.entries:
        hits = await call_runtime(runtime.hits, index)
        assert hits == golden.hits[index], f"entry {index}: {hits} hits, golden {golden.hits[index]}"
    assert await call_runtime(runtime.event_count) == len(bench.events.items)
    assert await call_runtime(runtime.done_mask) == sum(1 << i for i in scenario.entries)
    assert not await call_runtime(runtime.id_reuse_flag)
    stall_cycles = await call_runtime(runtime.stall_cycles)

    measurements = {
        "pressure": pressure, "requests": len(scenario.requests), "reads": len(reads),
        "events": len(bench.events.items), "write_events": len(write_events), "cycles": cycles, "wall_s": wall,
        "cycles_per_s": cycles / wall, "stall_cycles": stall_cycles, **scenario.description,
    }
    if pressure == "none":
        # One added cycle on the request path and on the response path, one request per cycle.
        request_latency = {m - g for g, m in zip(bench.gpu.transfer_cycles, bench.memory.request_cycles)}
        response_latency = {g - m for m, g in zip(bench.memory.response_cycles, bench.gpu_responses.transfer_cycles)}
        assert request_latency == {1}, f"request path latency {sorted(request_latency)} cycles"
        assert response_latency == {1}, f"response path latency {sorted(response_latency)} cycles"
        span = bench.gpu.transfer_cycles[-1] - bench.gpu.transfer_cycles[0] + 1
        assert span == len(scenario.requests), f"{len(scenario.requests)} requests took {span} cycles"
        assert stall_cycles == 0
        measurements.update(request_latency_cycles=1, response_latency_cycles=1,
                            requests_per_cycle=len(scenario.requests) / span)
    _report(measurements)
    dut._log.info("dnn_stream: %s", measurements)


@cocotb.test()
async def full_event_queue_stalls_only_the_gpu(dut):
    """With the event consumer stopped, the slice takes exactly as many triggering writes
    as its queue holds plus the one in its register stage, then holds the GPU; the stall
    counter counts exactly the held cycles; nothing is lost once the consumer resumes."""
    config = NDPConfig()
    bench = SliceBench(dut, config, pressure="none", seed=3)
    await bench.start()
    entry = FilterRange(0x1000, 0x10000, on_write=True, on_read=True)
    await call_runtime(bench.runtime.program, 0, entry)
    await call_runtime(bench.runtime.clear_counters)

    bench.events.hold = True
    full = (1 << config.sector_bytes) - 1
    writes = [dict(addr=0x1000 + 32 * i, write=1, data=i * 0x0101, mask=full, id=i % 256)
              for i in range(3 * config.trigger.event_queue_depth)]
    class HeldCycles:
        """Counts the cycles in which the slice holds the GPU path (request or response)."""
        count = 0
        active = True

        def drive(self):
            pass

        def sample(self, now):
            if self.active and (not int(dut.gpu__req__ready.value) or not int(dut.mem__resp__ready.value)):
                self.count += 1

    held = bench.loop.add(HeldCycles())
    sender = cocotb.start_soon(bench.gpu.send(writes))
    await WaitCycles(bench.dut.clk, 100)
    accepted = bench.gpu.sent
    reached_memory = len(bench.memory.requests)
    assert reached_memory == config.trigger.event_queue_depth, reached_memory
    assert accepted == config.trigger.event_queue_depth + 1, accepted
    bench.events.hold = False
    await sender
    await WaitCycles(bench.dut.clk, 4 * config.trigger.event_queue_depth + 20)
    held.active = False
    assert len(bench.memory.requests) == len(writes)
    assert [e["data"] for e in bench.events.items] == [w["data"] for w in writes]
    stall_cycles = await call_runtime(bench.runtime.stall_cycles)
    assert stall_cycles == held.count and stall_cycles >= 90, (stall_cycles, held.count)


@cocotb.test()
async def reused_read_id_is_flagged(dut):
    """Two reads with one tag outstanding at once set the sticky ID_REUSE flag (write 1
    clears it); responses still pass through."""
    config = NDPConfig()
    bench = SliceBench(dut, config, pressure="none", seed=4,
                       memory_timing=MemoryTiming(latency=20))
    await bench.start()
    assert not await call_runtime(bench.runtime.id_reuse_flag)
    await bench.gpu.send([dict(addr=0x40, write=0, data=0, mask=1, id=9),
                          dict(addr=0x60, write=0, data=0, mask=1, id=9)])
    await bench.drain(2)
    assert await call_runtime(bench.runtime.id_reuse_flag)
    await call_runtime(bench.runtime.write_register, "status", 1)
    assert not await call_runtime(bench.runtime.id_reuse_flag)
