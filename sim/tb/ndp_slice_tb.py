"""cocotb tests of the NDP slice's trigger path.

Parameters come from the environment (set by ``sim.runner.run_cocotb``'s ``extra_env``):

MATNDP_CONFIG     the slice's configuration (:func:`matndp.sim.designs.config_environment`);
                  the default configuration when unset
MATNDP_SEED       traffic and back-pressure seed
MATNDP_TILES      output tiles of the DNN layer in the stream test
MATNDP_PRESSURE   "none" or "random" back-pressure on every stream
MATNDP_REPORT     if set, a JSON file for measurements (cycles, wall time, counters)

Register addresses and field positions come from the register map
(:func:`matndp.hw.csr_map.register_map`), never from numbers written here.
"""

from collections import defaultdict
from dataclasses import asdict
import json
import os
import random
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles as WaitCycles, RisingEdge

from matndp.hw.bus.signature import CSR_DATA_WIDTH
from matndp.hw.config import NDPConfig
from matndp.hw.csr_map import MAGIC, entry_register_name, register_map
from matndp.hw.layouts import request_layout, response_layout, trigger_event_layout
from matndp.hw.trigger.trigger import (PIPELINED_EVENT_DELAY, PIPELINED_REQUEST_LATENCY,
                                       PIPELINED_RESPONSE_LATENCY, PIPELINED_REQUEST_PLACES)
from matndp.host.runtime import FilterRange, NDPRuntime
from matndp.host.csr_bus import CSRAccessError
from matndp.sim.drivers.csr_adapter import SimulatedCSRBus, call_runtime
from matndp.sim.designs import TRIGGER_SLICE, config_from_environment
from matndp.sim.drivers.csr import CSRDriver
from matndp.sim.drivers.memory_port import ReadTagGate
from matndp.sim.drivers.packing import StructCodec
from matndp.sim.drivers.pause import PAUSE_PATTERNS, BurstyPause, RandomPause
from matndp.sim.drivers.stream import (ClockCycles, CycleLoop, Participant, SignalTrace,
                                       StreamMonitor, StreamSink, StreamSource)
from matndp.sim.drivers.memory_model import MemoryModel, MemoryTiming
from matndp.sim.flows.trigger_traffic import OUTPUT_ENTRY, build_scenario, golden_replay, matching_entry


CLOCK_NS = 10
MEMORY_LATENCY = 12
WORD_BYTES = CSR_DATA_WIDTH // 8

# The pause pattern of every stream under each back-pressure setting. The event consumer
# is the slowest, so that the event queues fill and hold the GPU now and then.
PRESSURES = {
    "none": dict(gpu=PAUSE_PATTERNS["none"], gpu_responses=PAUSE_PATTERNS["none"],
                 events=PAUSE_PATTERNS["none"], memory_requests=PAUSE_PATTERNS["none"],
                 memory_responses=PAUSE_PATTERNS["none"]),
    "random": dict(gpu=PAUSE_PATTERNS["random"], gpu_responses=PAUSE_PATTERNS["random"],
                   events=RandomPause(0.5), memory_requests=PAUSE_PATTERNS["random"],
                   memory_responses=PAUSE_PATTERNS["random"]),
}


def _env(name, default):
    return type(default)(os.environ.get(name, default))


def _pack(register, **values):
    """A register word with the named fields set, placed by the register map."""
    word = 0
    for name, value in values.items():
        field = register.field(name)
        if not 0 <= value < 1 << field.width:
            raise ValueError(f"{register.name}.{name}={value:#x} does not fit {field.width} bits")
        word |= value << field.lsb
    return word


def _unpack(register, word, name):
    field = register.field(name)
    return word >> field.lsb & ((1 << field.width) - 1)


def request_latency(config):
    """Cycles the slice adds on the request path (docs/trigger.md)."""
    return PIPELINED_REQUEST_LATENCY if config.trigger.pipelined else 1


def response_latency(config):
    """Cycles the slice adds on the response path (docs/trigger.md)."""
    return PIPELINED_RESPONSE_LATENCY if config.trigger.pipelined else 1


def request_places(config):
    """Requests the slice's request side holds."""
    return PIPELINED_REQUEST_PLACES if config.trigger.pipelined else 1


class StallObserver(Participant):
    """The cycles in which the slice holds the GPU path because an event queue is full,
    observed at the slice's ports and defined by docs/trigger.md, not by the RTL:

    - a request is in the slice's stage (the GPU handed it over; it has not reached memory)
      and the slice does not offer it to memory, or a read response is in the stage (memory
      handed it over; it has not reached the GPU) and the slice does not offer it to the GPU;
    - per the spec a triggering write is held exactly when the write queue is full, a
      triggering read exactly when every place of the read queue is taken or reserved, and
      a read response never; the queues are modelled from the transfers (a write event
      enters as its write leaves for memory; a read reserves its place as it leaves for
      memory; either event leaves on the ``events`` stream), against ``event_queue_depth``.

    A request counts as in the stage once it is due there: the cycle after it entered, or
    with the pipelined request side ``PIPELINED_REQUEST_LATENCY`` cycles after; a response
    likewise the cycle after it entered, or ``PIPELINED_RESPONSE_LATENCY`` cycles after.

    ``count`` is the number of held cycles (``request_held`` and ``response_held`` per
    path; a cycle in which both are held counts once in ``count``); ``mismatches`` lists
    the cycles in which the slice held an access whose queue had room, or passed one whose
    queue was full.
    """

    def __init__(self, bench):
        self.bench = bench
        self.depth = bench.config.trigger.event_queue_depth
        self.latency = request_latency(bench.config)
        self.response_latency = response_latency(bench.config)
        self._mem_req_valid = bench.dut.mem__req__valid
        self._gpu_resp_valid = bench.dut.gpu__resp__valid
        self.count = 0
        self.request_held = 0
        self.response_held = 0
        self.held_cycles = []
        self.mismatches = []
        self._seen = defaultdict(int)                   # log name -> entries consumed
        self._write_queue = 0
        self._read_places = 0

    def _new(self, name, cycles, now):
        """Indices of the entries of a transfer log made at edges before cycle ``now``."""
        start = self._seen[name]
        end = start
        while end < len(cycles) and cycles[end] < now:
            end += 1
        self._seen[name] = end
        return range(start, end)

    def _triggers(self, request):
        return matching_entry(self.bench.runtime.ranges, request) is not None

    def sample(self, now):
        bench = self.bench
        memory = bench.memory
        for k in self._new("issued", memory.request_cycles, now):
            request = memory.requests[k]
            if request["write"]:
                self._write_queue += self._triggers(request)
            else:
                self._read_places += self._triggers(request)
        self._new("returned", memory.response_cycles, now)
        self._new("answered", bench.gpu_responses.transfer_cycles, now)
        for k in self._new("events", bench.events.transfer_cycles, now):
            if bench.events.items[k]["write"]:
                self._write_queue -= 1
            else:
                self._read_places -= 1
        self._new("accepted", bench.gpu.transfer_cycles, now)
        requests_in, requests_out = self._seen["accepted"], self._seen["issued"]
        responses_in, responses_out = self._seen["returned"], self._seen["answered"]

        withheld = False
        if requests_in > requests_out and \
                now >= bench.gpu.transfer_cycles[requests_out] + self.latency:
            head = bench.gpu.items[requests_out]
            places = self._write_queue if head["write"] else self._read_places
            must_hold = self._triggers(head) and places >= self.depth
            held = not int(self._mem_req_valid.value)
            if held != must_hold:
                self.mismatches.append((now, "request", held, places))
            self.request_held += held
            withheld |= held
        if responses_in > responses_out and \
                now >= bench.memory.response_cycles[responses_out] + self.response_latency:
            held = not int(self._gpu_resp_valid.value)
            if held:
                self.mismatches.append((now, "response", held, self._read_places))
            self.response_held += held
            withheld |= held
        self.count += withheld
        if withheld:
            self.held_cycles.append(now)


class LevelWatch(Participant):
    """The cycles in which a one-bit output changes level, and its level in each."""

    def __init__(self, signal):
        self.signal = signal
        self.level = None
        self.changes = []                   # (cycle, new level)

    def sample(self, now):
        level = int(self.signal.value)
        if level != self.level:
            self.changes.append((now, level))
            self.level = level


class SliceBench:
    """The NDP slice with a GPU-side driver, a memory model, an event sink, monitors that
    check the stream rules on the slice's outputs, the stall observer and the host
    runtime on the CSR bus."""

    def __init__(self, dut, config, *, pressure, seed, memory_timing=None, unique_read_tags=True,
                 event_pause=None):
        self.dut = dut
        self.config = config
        self.registers = register_map(config)
        self.cycles = ClockCycles(CLOCK_NS)
        self.loop = CycleLoop(dut.clk, self.cycles, reset=dut.rst)
        patterns = PRESSURES[pressure]
        requests, responses = StructCodec(request_layout(config)), StructCodec(response_layout(config))
        events = StructCodec(trigger_event_layout(config))
        self.gpu = self.loop.add(StreamSource(dut, "gpu__req", codec=requests, pause=patterns["gpu"], seed=seed))
        self.gpu_responses = self.loop.add(StreamSink(dut, "gpu__resp", codec=responses,
                                                      pause=patterns["gpu_responses"], seed=seed + 1))
        self.events = self.loop.add(StreamSink(dut, "events", codec=events,
                                               pause=event_pause or patterns["events"], seed=seed + 2))
        if memory_timing is None:
            memory_timing = MemoryTiming(latency=MEMORY_LATENCY, request_pause=patterns["memory_requests"],
                                         response_pause=patterns["memory_responses"],
                                         reorder=pressure == "random")
        self.memory = self.loop.add(MemoryModel(dut, config, memory_timing, seed=seed + 3))
        if unique_read_tags:
            self.gpu.gate = self.loop.add(ReadTagGate(self.gpu, self.gpu_responses))
        self.outputs = [self.loop.add(StreamMonitor(dut, prefix, record=False))
                        for prefix in ("mem__req", "gpu__resp", "events")]
        self.stalls = self.loop.add(StallObserver(self))
        self.csr = CSRDriver(dut, dut.clk)
        self.runtime = NDPRuntime(SimulatedCSRBus(self.csr), config)

    async def start(self):
        cocotb.start_soon(Clock(self.dut.clk, CLOCK_NS, unit="ns").start())
        self.dut.mem_write_error.value = 0      # the memory model accepts every write
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

    async def read(self, name):
        value, error = await self.csr.read(self.registers[name].address)
        assert not error, f"bus error reading {name}"
        return value

    async def check_stall_counter(self):
        """STALL_CYCLES, read over the bus, against the held cycles seen at the ports; the
        slice held the GPU exactly when the spec says it must. Returns the count."""
        for monitor in self.outputs:
            assert not monitor.violations, f"{monitor.prefix}: stream rules broken: {monitor.violations[:5]}"
        assert not self.stalls.mismatches, \
            f"held or passed against the spec (cycle, path, held, queue level): {self.stalls.mismatches[:5]}"
        stall_cycles = await self.read("stall_cycles")
        assert stall_cycles == self.stalls.count, \
            f"STALL_CYCLES reads {stall_cycles}; the ports show {self.stalls.count} held cycles"
        return stall_cycles


def _report(values):
    path = os.environ.get("MATNDP_REPORT")
    if path:
        with open(path, "w") as file:
            json.dump(values, file, indent=2)


def _word_addresses(registers):
    """Every word address the register bus can express."""
    return range(0, 1 << registers.addr_width, WORD_BYTES)


@cocotb.test()
async def csr_map_and_bus_errors(dut):
    """Identity registers, read-back of a programmed entry, and bus errors for unmapped,
    misaligned and read-only accesses."""
    config = config_from_environment(TRIGGER_SLICE)
    bench = SliceBench(dut, config, pressure="none", seed=1)
    await bench.start()
    runtime = bench.runtime
    registers = bench.registers
    found = await call_runtime(runtime.probe)
    assert found["filter_entries"] == config.trigger.filter_entries
    assert _unpack(registers["id"], await bench.read("id"), "magic") == MAGIC
    word = await bench.read("config")
    for name, value in (("filter_entries", config.trigger.filter_entries), ("sector_bytes", config.sector_bytes),
                        ("addr_width", config.addr_width), ("id_width", config.id_width)):
        assert _unpack(registers["config"], word, name) == value, f"CONFIG.{name}"

    index = config.trigger.filter_entries - 1
    # Addresses and sizes are split into a low and a high register; both halves non-zero.
    low_bits = registers[entry_register_name(index, "base_lo")].field("base").width
    low = (1 << low_bits) - 1
    base = 0xAB_CDEF_0000
    size = (1 << low_bits) + config.sector_bytes
    entry = FilterRange(base, size, on_write=True, on_read=True, kernel_pc=0x1234, arg_index=7, expected=99)
    await call_runtime(runtime.program, index, entry)
    expected = {
        "ctrl": dict(enable=1, on_write=1, on_read=1),
        "base_lo": dict(base=base & low), "base_hi": dict(base=base >> low_bits),
        "size_lo": dict(size=size & low), "size_hi": dict(size=size >> low_bits),
        "kernel_pc": dict(pc=0x1234), "arg_index": dict(index=7), "expected": dict(count=99),
        "hits": dict(count=0),
    }
    entry_registers = [register for register in registers
                       if register.name.startswith(entry_register_name(index, ""))]
    assert sorted(register.name for register in entry_registers) == \
        sorted(entry_register_name(index, name) for name in expected), "an entry register the test does not check"
    for name, fields in expected.items():
        register = registers[entry_register_name(index, name)]
        value = await bench.read(register.name)
        assert value == _pack(register, **fields), f"{register.name} reads {value:#x}, expected {fields}"

    # Every word the map defines reads without an error, every other word and a misaligned
    # address are errors both ways.
    mapped = {register.address for register in registers}
    for address in _word_addresses(registers):
        value, error = await bench.csr.read(address)
        assert error == (address not in mapped), \
            f"read of {'unmapped' if error else 'mapped'} address {address:#x}: error flag {error}"
    misaligned = registers[entry_register_name(0, "ctrl")].address + WORD_BYTES // 2
    _, error = await bench.csr.read(misaligned)
    assert error, f"read of misaligned address {misaligned:#x} was not flagged"
    for address in [a for a in _word_addresses(registers) if a not in mapped] + [misaligned]:
        error = await bench.csr.write(address, 0xFFFF_FFFF)
        assert error, f"write to unmapped address {address:#x} was not flagged"
    read_only = [register for register in registers if not register.writable]
    assert {"id", "config", "complete"} <= {register.name for register in read_only}
    for register in read_only:
        before, _ = await bench.csr.read(register.address)
        assert await bench.csr.write(register.address, 0x5555_5555), f"write to read-only {register.name} not flagged"
        after, error = await bench.csr.read(register.address)
        assert after == before and not error

    # The runtime surfaces bus errors as exceptions.
    try:
        await call_runtime(bench.runtime.bus.read, (1 << registers.addr_width) - WORD_BYTES)
    except CSRAccessError:
        pass
    else:
        raise AssertionError("runtime read of an unmapped address raised no error")


@cocotb.test()
async def dnn_stream(dut):
    """A ResNet-50 convolution's output stream mixed with other traffic: pass-through is
    exact and in order, events appear exactly for in-range accesses, counters agree, the
    stall counter counts the held cycles. Without back-pressure it also measures the added
    latency and the sustained rate."""
    config = config_from_environment(TRIGGER_SLICE)
    seed = _env("MATNDP_SEED", 1)
    pressure = os.environ.get("MATNDP_PRESSURE", "none")
    scenario = build_scenario(config, tiles=_env("MATNDP_TILES", 2), seed=seed)
    golden = golden_replay(scenario)
    bench = SliceBench(dut, config, pressure=pressure, seed=seed)
    irq = bench.loop.add(LevelWatch(dut.irq))
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
    # The interrupt of the output's entry: it rises when the layer's output is written.
    await call_runtime(runtime.enable_interrupts, 1 << OUTPUT_ENTRY)
    await RisingEdge(dut.clk)
    assert not int(dut.irq.value), "irq is high before any traffic"
    checks = []

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
    checks.append("every request reached memory unchanged and in order")

    # Every read gets exactly one response with the right data; pair them by tag (a tag is
    # reused only once its previous read has been answered).
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
    checks.append("every read got one response, with the golden memory's data")

    # Events: writes in request order, reads in response order, each with its data.
    write_events = [event for event in bench.events.items if event["write"]]
    read_events = [event for event in bench.events.items if not event["write"]]
    assert write_events == golden.write_events, "write events differ from the golden model"
    expected_read_events = [golden.read_events[i] for i in response_order if i in golden.read_events]
    assert read_events == expected_read_events, "read events differ from the golden model"
    assert write_events and read_events, "the scenario produced no events of one kind: a weak test"
    checks.append("write events (in request order) and read events (in response order) equal "
                  "the golden replay's, with their data and byte enables")

    # Counters through the runtime.
    for index in scenario.entries:
        hits = await call_runtime(runtime.hits, index)
        assert hits == golden.hits[index], f"entry {index}: {hits} hits, golden {golden.hits[index]}"
    assert await call_runtime(runtime.event_count) == len(bench.events.items)
    assert await call_runtime(runtime.done_mask) == _pack(bench.registers["complete"],
                                                          mask=sum(1 << i for i in scenario.entries))
    assert not await call_runtime(runtime.id_reuse_flag)
    checks.append("HITS per entry, EVENT_COUNT and COMPLETE read over the bus equal the golden "
                  "counts; ID_REUSE stays clear")
    stall_cycles = await bench.check_stall_counter()
    checks.append("the stream rules hold on every output; the slice held the GPU exactly when "
                  "an event queue was full, and STALL_CYCLES counts those cycles")

    # irq: low until the output entry's last event is produced (a write's as the write
    # leaves for memory, a read's as its response leaves for the GPU), high from then on.
    def output_hit(index):
        return matching_entry(scenario.entries, scenario.requests[index]) == OUTPUT_ENTRY
    produced = [bench.memory.request_cycles[i] for i, request in enumerate(scenario.requests)
                if request["write"] and output_hit(i)]
    produced += [bench.gpu_responses.transfer_cycles[k] for k, i in enumerate(response_order)
                 if output_hit(i)]
    last_event = max(produced)
    rises = [cycle for cycle, level in irq.changes if level]
    assert len(rises) == 1 and irq.changes[-1][1] == 1, f"irq changes (cycle, level): {irq.changes}"
    irq_rise = rises[0]
    # HITS counts the event as it is produced (pipelined: PIPELINED_EVENT_DELAY cycles
    # after); COMPLETE and irq follow the counter (pipelined: a cycle later).
    counted_late = PIPELINED_EVENT_DELAY + 1 if config.trigger.pipelined else 0
    assert 0 < irq_rise - last_event <= 2 + counted_late, \
        f"irq rose in cycle {irq_rise}; the output entry's last event was produced in {last_event}"
    checks.append("irq rose once, as the output entry's last event was produced, and stayed high")

    measurements = {
        "pressure": pressure, "requests": len(scenario.requests), "reads": len(reads),
        "events": len(bench.events.items), "write_events": len(write_events), "cycles": cycles, "wall_s": wall,
        "cycles_per_s": cycles / wall, "stall_cycles": stall_cycles,
        "gpu_tag_wait_cycles": bench.gpu.gated_cycles, "config": asdict(config), **scenario.description,
        "entries": {index: {"base": entry.base, "size": entry.size, "on_write": entry.on_write,
                            "on_read": entry.on_read, "expected": entry.expected,
                            "irq": index == OUTPUT_ENTRY}
                    for index, entry in scenario.entries.items()},
        "events_by_entry": {index: sum(event["entry"] == index for event in bench.events.items)
                            for index in scenario.entries},
        "disabled_entries": sorted(scenario.disabled_entries),
        "checks": checks,
        # When things happen, for the waveform's save file and the report's figure.
        "cycle_ps": CLOCK_NS * 1000,
        "first_request_cycle": bench.gpu.transfer_cycles[0],
        "first_event_cycle": bench.events.transfer_cycles[0],
        "held_cycles": bench.stalls.held_cycles,
        "irq_rise_cycle": irq_rise,
        "irq_latency_cycles": irq_rise - last_event,
        "event_cycles": {index: [cycle for cycle, event in zip(bench.events.transfer_cycles, bench.events.items)
                                 if event["entry"] == index] for index in scenario.entries},
    }
    if pressure == "none":
        # One added cycle on the request path (pipelined: three) and on the response path,
        # one request per cycle. Nothing pushes back, so the only exceptions are the cycles
        # the slice holds an access for a full event queue (the consumer takes one event
        # per cycle, the slice can make two) and the cycles the GPU waits for a free read
        # tag; with the default configurations there are none of either.
        latency = request_latency(config)
        back = response_latency(config)
        request_delay = [m - g - latency for g, m in zip(bench.gpu.transfer_cycles, bench.memory.request_cycles)]
        response_delay = [g - m - back for m, g in zip(bench.memory.response_cycles, bench.gpu_responses.transfer_cycles)]
        assert min(request_delay) == 0, f"request path latency {sorted(set(request_delay))} + {latency} cycles"
        if not config.trigger.pipelined:
            # With one stage a request waits there only while it is held; pipelined, the
            # requests behind a held one wait too.
            assert sum(request_delay) == bench.stalls.request_held, \
                f"request path latency {sorted(set(request_delay))} + 1 cycles, {bench.stalls.request_held} held"
        assert min(response_delay) == 0 and sum(response_delay) == bench.stalls.response_held, \
            f"response path latency {sorted(set(response_delay))} + {back} cycles, {bench.stalls.response_held} held"
        refused = bench.gpu.refused_cycles
        assert refused <= bench.stalls.request_held, f"the slice refused {refused} offers while not held"
        span = bench.gpu.transfer_cycles[-1] - bench.gpu.transfer_cycles[0] + 1
        idle = bench.gpu.gated_cycles
        assert span == len(scenario.requests) + idle + refused, \
            f"{len(scenario.requests)} requests took {span} cycles ({idle} waiting for a free read tag, " \
            f"{refused} offered and held)"
        # Pipelined, an event holds its place about seven cycles from its transfer to the
        # events port, so where both sources trigger at once a queue of the default depth
        # fills now and then; those holds are the ones the stall observer checks above.
        if config == TRIGGER_SLICE:
            assert set(request_delay) == {0}, f"request path latency {sorted(set(request_delay))} + {latency} cycles"
            assert set(response_delay) == {0}, f"response path latency {sorted(set(response_delay))} + {back} cycles"
            assert span == len(scenario.requests), f"{len(scenario.requests)} requests took {span} cycles"
            assert stall_cycles == 0
        measurements.update(request_latency_cycles=latency + sum(request_delay) / len(request_delay),
                            response_latency_cycles=back + sum(response_delay) / len(response_delay),
                            requests_per_cycle=len(scenario.requests) / span)
    _report(measurements)
    dut._log.info("dnn_stream: %s", measurements)


class _HeldCycles(Participant):
    """Counts the cycles in which the slice holds the GPU path (request or response)."""

    def __init__(self, dut):
        self.dut = dut
        self.count = 0
        self.active = True

    def sample(self, now):
        if self.active and (not int(self.dut.gpu__req__ready.value) or not int(self.dut.mem__resp__ready.value)):
            self.count += 1


@cocotb.test()
async def full_event_queue_stalls_only_the_gpu(dut):
    """With the event consumer stopped, the slice takes exactly as many triggering writes
    as its queue holds plus those its request side holds, then holds the GPU; the stall
    counter counts exactly the held cycles; nothing is lost once the consumer resumes."""
    config = config_from_environment(TRIGGER_SLICE)
    bench = SliceBench(dut, config, pressure="none", seed=3)
    await bench.start()
    sector = config.sector_bytes
    entry = FilterRange(0x1000, 0x10000, on_write=True, on_read=True)
    await call_runtime(bench.runtime.program, 0, entry)
    await call_runtime(bench.runtime.clear_counters)

    bench.events.hold = True
    full = (1 << sector) - 1
    depth = config.trigger.event_queue_depth
    writes = [dict(addr=entry.base + sector * i, write=1, data=i * 0x0101, mask=full, id=i % (1 << config.id_width))
              for i in range(3 * depth)]
    held = bench.loop.add(_HeldCycles(dut))
    sender = cocotb.start_soon(bench.gpu.send(writes))
    await WaitCycles(bench.dut.clk, 100)
    accepted = bench.gpu.sent
    reached_memory = len(bench.memory.requests)
    assert reached_memory == depth, reached_memory
    assert accepted == depth + request_places(config), accepted
    bench.events.hold = False
    await sender
    await WaitCycles(bench.dut.clk, 4 * depth + 20)
    held.active = False
    assert len(bench.memory.requests) == len(writes)
    assert [e["data"] for e in bench.events.items] == [w["data"] for w in writes]
    stall_cycles = await bench.check_stall_counter()
    # Held from when the first write that finds the queue full is due at the head, to a
    # few cycles after the consumer resumes at cycle 100.
    assert stall_cycles >= 91 - request_latency(config), stall_cycles
    if not config.trigger.pipelined:
        # One stage: the GPU side is closed exactly while its request is held. Pipelined,
        # the request side closes only once its places behind the held request fill.
        assert stall_cycles == held.count, (stall_cycles, held.count)


@cocotb.test()
async def stall_counter_under_random_back_pressure(dut):
    """Random back-pressure on every stream and a bursty event consumer, with most writes
    and reads triggering: both event queues fill, and memory holds requests back too.
    STALL_CYCLES must count the cycles held for a full queue, and only those: here they
    differ from the cycles in which the GPU offers a request the slice does not take."""
    config = config_from_environment(TRIGGER_SLICE)
    seed = _env("MATNDP_SEED", 1)
    bench = SliceBench(dut, config, pressure="random", seed=seed,
                       event_pause=BurstyPause(mean_pause=12, mean_active=6))
    offered = bench.loop.add(SignalTrace({"valid": dut.gpu__req__valid, "ready": dut.gpu__req__ready}))
    await bench.start()
    sector = config.sector_bytes
    index = config.trigger.filter_entries - 1
    entry = FilterRange(0x20_0000, 256 * sector, on_write=True, on_read=True)
    await call_runtime(bench.runtime.program, index, entry)
    await call_runtime(bench.runtime.clear_counters)

    rng = random.Random(seed)
    full = (1 << sector) - 1
    tag = 0
    requests = []
    for _ in range(400):
        inside = rng.random() < 0.85
        addr = (entry.base if inside else entry.end) + sector * rng.randrange(256)
        if rng.random() < 0.6:
            requests.append(dict(addr=addr, write=1, data=rng.getrandbits(8 * sector), mask=full,
                                 id=rng.getrandbits(config.id_width)))
        else:
            requests.append(dict(addr=addr, write=0, data=0, mask=full, id=tag))
            tag = (tag + 1) % (1 << config.id_width)
    await bench.gpu.send(requests)
    await bench.drain(sum(not request["write"] for request in requests))

    triggering = sum(matching_entry({index: entry}, request) is not None for request in requests)
    assert len(bench.events.items) == triggering
    assert {event["entry"] for event in bench.events.items} == {index}
    stall_cycles = await bench.check_stall_counter()
    refused = sum(v and not r for v, r in zip(offered.trace["valid"], offered.trace["ready"]))
    assert stall_cycles > 20, f"only {stall_cycles} held cycles: the queues hardly filled"
    assert refused != stall_cycles, "the held cycles equal the refused offers: the test cannot tell them apart"
    dut._log.info("stall_counter_under_random_back_pressure: %d held cycles, %d refused offers",
                  stall_cycles, refused)


@cocotb.test()
async def reused_read_id_is_flagged(dut):
    """Two reads with one tag outstanding at once set the sticky ID_REUSE flag (write 1
    clears it); responses still pass through."""
    config = config_from_environment(TRIGGER_SLICE)
    bench = SliceBench(dut, config, pressure="none", seed=4, unique_read_tags=False,
                       memory_timing=MemoryTiming(latency=20))
    await bench.start()
    assert not await call_runtime(bench.runtime.id_reuse_flag)
    sector = config.sector_bytes
    tag = (1 << config.id_width) - 1
    await bench.gpu.send([dict(addr=2 * sector, write=0, data=0, mask=1, id=tag),
                          dict(addr=3 * sector, write=0, data=0, mask=1, id=tag)])
    await bench.drain(2)
    assert await call_runtime(bench.runtime.id_reuse_flag)
    await call_runtime(bench.runtime.write_register, "status", _pack(bench.registers["status"], id_reuse=1))
    assert not await call_runtime(bench.runtime.id_reuse_flag)
