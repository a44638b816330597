"""cocotb tests of the FPGA top (hw/fpga/top.py) with cocotbext-axi: an ``AxiMaster`` on the
GPU side, an ``AxiRam`` as memory, the register port through AXI4-Lite
(:class:`~matndp.sim.drivers.axi_lite.AXILiteCSRDriver`), random pauses on every channel.

The references are written from the AXI specification (:mod:`matndp.sim.golden.axi`
gives each beat's address and bytes) and a byte array that every write is applied to, never
from the RTL: memory must end up byte-for-byte as the reference, every read must return
the reference's bytes, and the trigger's events must be exactly those of the beats whose
sector lies in an armed range.

Parameters come from the environment:

MATNDP_CONFIG      the slice's configuration (default: the trigger alone)
MATNDP_SEED        traffic and pause seed
MATNDP_OPERATIONS  operations per worker in the random-traffic tests
MATNDP_PRESSURE    "none" or "random" pauses on every channel
"""

from collections import Counter
import logging
import os
import random
import warnings

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge, with_timeout

from cocotbext.axi import AxiBurstType, AxiBus, AxiMaster, AxiRam, AxiResp
from cocotbext.axi.axi_ram import AxiRamRead, AxiRamWrite
from cocotbext.axi.memory import Memory

from matndp.hw.csr_map import MAGIC, register_map
from matndp.hw.layouts import trigger_event_layout
from matndp.host.csr_bus import CSRAccessError
from matndp.host.runtime import FilterRange, NDPRuntime
from matndp.sim.drivers.csr_adapter import SimulatedCSRBus, call_runtime
from matndp.sim.designs import TRIGGER_SLICE, config_from_environment
from matndp.sim.drivers.axi_lite import AXILiteCSRDriver
from matndp.sim.drivers.pause import PAUSE_PATTERNS, pause_iterator
from matndp.sim.golden.axi import FIXED, INCR, WRAP, beat_addresses, beat_bytes


# cocotbext-axi 0.1.28 calls APIs that cocotb 2 deprecates (Event.data, Task.kill(), ...).
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"cocotbext\.")

CLOCK_NS = 10
MEMORY_BYTES = 1 << 20
REGION_BYTES = 0x4000            # each worker's own addresses
WORKERS = 4


def _env(name, default):
    return type(default)(os.environ.get(name, default))


class FaultyAxiRam(Memory):
    """An ``AxiRam`` that answers every access to the sectors in ``faults`` (sector index →
    AxiResp) with that response; a refused write leaves memory unchanged."""

    def __init__(self, bus, clock, reset, *, size, faults, sector_bytes):
        super().__init__(size)
        self.write_if = _FaultyPort(AxiRamWrite, bus.write, clock, reset, self.mem, faults,
                                    sector_bytes, "b_channel", "bresp")
        self.read_if = _FaultyPort(AxiRamRead, bus.read, clock, reset, self.mem, faults,
                                   sector_bytes, "r_channel", "rresp")


def _FaultyPort(base, bus, clock, reset, mem, faults, sector_bytes, channel, field):
    """One side of :class:`FaultyAxiRam`: the access raises (the model then answers SLVERR)
    and the response it sends is given the fault's own code."""

    class Port(base):
        def __init__(self):
            super().__init__(bus, clock, reset, mem=mem)
            self.fault = None
            response_channel = getattr(self, channel)
            send = response_channel.send

            async def send_with_fault(response):
                if self.fault is not None:
                    setattr(response, field, self.fault)
                    self.fault = None
                await send(response)
            response_channel.send = send_with_fault

        def _check(self, address):
            fault = faults.get(address // sector_bytes)
            if fault is not None:
                self.fault = fault
                raise IOError(f"injected {fault.name} at {address:#x}")

        async def _read(self, address, length):
            self._check(address)
            return await super()._read(address, length)

        async def _write(self, address, data):
            self._check(address)
            await super()._write(address, data)

    return Port()


class Bench:
    """The top with its AXI models, the reference memory and the runtime over AXI4-Lite."""

    def __init__(self, dut, *, seed, pressure, faults=None):
        self.dut = dut
        # In reset from the first instant, so the models never sample an undefined design.
        dut.rst.value = 1
        self.config = config_from_environment(TRIGGER_SLICE)
        self.sector_bytes = self.config.sector_bytes
        self.registers = register_map(self.config)
        self.rng = random.Random(seed)
        self.gpu = AxiMaster(AxiBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
        memory_bus = AxiBus.from_prefix(dut, "m_axi")
        if faults is None:
            self.memory = AxiRam(memory_bus, dut.clk, dut.rst, size=MEMORY_BYTES)
        else:
            self.memory = FaultyAxiRam(memory_bus, dut.clk, dut.rst, size=MEMORY_BYTES,
                                       faults=faults, sector_bytes=self.sector_bytes)
        self.csr = AXILiteCSRDriver(dut, dut.clk, dut.rst)
        # The models log every burst; the injected faults are expected.
        for prefix, level in (("s_axi", logging.WARNING), ("m_axi", logging.ERROR),
                              ("s_axil", logging.WARNING)):
            logging.getLogger(f"cocotb.{dut._name}.{prefix}").setLevel(level)
        self.runtime = NDPRuntime(SimulatedCSRBus(self.csr), self.config)
        self.reference = bytearray(MEMORY_BYTES)
        self.expected_events = Counter()
        self.events = Counter()
        self.ranges = []                 # (entry, FilterRange)
        pattern = PAUSE_PATTERNS[pressure]
        seeds = iter(range(seed * 100, seed * 100 + 100))
        for channels in (self.gpu.write_if, self.gpu.read_if, self.memory.write_if,
                         self.memory.read_if):
            for name in ("aw_channel", "w_channel", "b_channel", "ar_channel", "r_channel"):
                if hasattr(channels, name):
                    getattr(channels, name).set_pause_generator(pause_iterator(pattern, next(seeds)))
        self.csr.pause_channels({name: pause_iterator(pattern, next(seeds))
                                 for name in ("aw", "w", "b", "ar", "r")})
        self.event_pauses = pause_iterator(pattern, next(seeds))
        self.has_events = self.config.engine is None

    async def start(self):
        cocotb.start_soon(Clock(self.dut.clk, CLOCK_NS, unit="ns").start())
        if self.has_events:
            self.dut.events_ready.value = 0
            cocotb.start_soon(self._take_events())
        await self.reset()

    async def reset(self, cycles=4):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, cycles)
        self.dut.rst.value = 0
        await ClockCycles(self.dut.clk, 2)

    async def _take_events(self):
        """Take trigger events with random back-pressure and count them by content. As
        cocotbext-axi's sinks do, the handshake is read at the clock edge, where the values
        are those of the cycle that ends there, and ``ready`` is then set for the next."""
        dut = self.dut
        fields = [name for name, _ in trigger_event_layout(self.config)]
        ready = False
        while True:
            await RisingEdge(dut.clk)
            if ready and int(dut.events_valid.value) and not int(dut.rst.value):
                event = {name: int(getattr(dut, f"events_{name}").value) for name in fields}
                self.events[self._event_key(event)] += 1
            ready = not next(self.event_pauses)
            dut.events_ready.value = int(ready)

    def _event_key(self, event):
        enabled = sum(0xFF << 8 * byte for byte in range(self.sector_bytes) if event["mask"] >> byte & 1)
        return (event["entry"], event["addr"], event["offset"], event["mask"], event["write"],
                event["data"] & enabled)

    # --- filter ranges ---------------------------------------------------------------------
    async def arm(self, index, base, size, *, on_write, on_read):
        entry = FilterRange(base, size, on_write=on_write, on_read=on_read)
        await call_runtime(self.runtime.program, index, entry)
        self.ranges.append((index, entry))

    def _matching_entry(self, sector, write):
        for index, entry in sorted(self.ranges, key=lambda item: item[0]):
            if entry.base <= sector < entry.end and (entry.on_write if write else entry.on_read):
                return index, entry
        return None

    def _expect_event(self, sector, mask, write, data):
        match = self._matching_entry(sector, write)
        if match is None:
            return
        index, entry = match
        key = self._event_key({"entry": index, "addr": sector, "offset": sector - entry.base,
                               "mask": mask, "write": int(write), "data": data})
        self.expected_events[key] += 1

    # --- operations --------------------------------------------------------------------------
    def beats(self, operation):
        """(beat address, bytes it carries, data offset of its first byte) of each beat of
        ``operation`` as AXI defines them."""
        address, length, size, burst = (operation[key] for key in ("addr", "length", "size", "burst"))
        step = 1 << size
        if burst == INCR:
            count = (length + address % step + step - 1) // step
        else:
            count = length // step
        result, offset = [], 0
        for beat in beat_addresses(address, count - 1, size, burst):
            carried = list(beat_bytes(beat, size))
            result.append((beat, carried, offset))
            offset += len(carried)
        return result

    async def write(self, operation, data, faults=None):
        """Perform a write through the GPU side and apply it to the reference (skipping the
        sectors that ``faults`` refuses); returns the response."""
        sb = self.sector_bytes
        response = await self.gpu.write(operation["addr"], data, awid=operation["id"],
                                        burst=AxiBurstType(operation["burst"]),
                                        size=operation["size"])
        end = operation["addr"] + len(data)
        for beat, carried, offset in self.beats(operation):
            written = [byte for byte in carried if operation["addr"] <= byte < end] \
                if operation["burst"] == INCR else carried
            sector = beat - beat % sb
            beat_data = bytearray(sb)
            mask = 0
            for position, byte in enumerate(carried):
                if byte in written:
                    value = data[offset + position]
                    beat_data[byte % sb] = value
                    mask |= 1 << (byte % sb)
            if faults is None or sector // sb not in faults:
                for byte in written:
                    self.reference[byte] = beat_data[byte % sb]
                self._expect_event(sector, mask, True, int.from_bytes(beat_data, "little"))
        return response

    async def read(self, operation):
        """Perform a read through the GPU side; returns (response, the reference's bytes)."""
        sb = self.sector_bytes
        expected = bytearray()
        for beat, carried, _ in self.beats(operation):
            sector = beat - beat % sb
            mask = sum(1 << (byte % sb) for byte in carried)
            self._expect_event(sector, mask, False,
                               int.from_bytes(self.reference[sector:sector + sb], "little"))
            expected += bytes(self.reference[byte] for byte in carried)
        expected = bytes(expected[:operation["length"]])
        response = await self.gpu.read(operation["addr"], operation["length"], arid=operation["id"],
                                       burst=AxiBurstType(operation["burst"]), size=operation["size"])
        return response, expected

    def random_operation(self, rng, base, ids):
        """A random burst inside ``[base, base + REGION_BYTES)``: mostly INCR of any size,
        alignment and length, some full-width WRAP and FIXED bursts."""
        sb = self.sector_bytes
        full = sb.bit_length() - 1
        style = rng.choices([INCR, WRAP, FIXED], weights=[6, 2, 1])[0]
        if style == INCR:
            size = rng.randint(0, full)
            length = rng.choice([1, 2, rng.randint(1, sb), rng.randint(1, 4 * sb),
                                 rng.randint(1, 600)])
            addr = base + rng.randrange(REGION_BYTES - length)
        else:
            size = full
            beats = rng.choice([2, 4, 8, 16]) if style == WRAP else rng.randint(1, 16)
            length = beats * sb
            window = length if style == WRAP else sb
            start = base + window * rng.randrange(REGION_BYTES // window)
            addr = start + sb * rng.randrange(beats) if style == WRAP else start
            # cocotbext-axi splits bursts at 4 KiB by their incrementing addresses.
            if addr % 0x1000 + length > 0x1000:
                addr = start
                if addr % 0x1000 + length > 0x1000:
                    addr -= addr % 0x1000 + length - 0x1000
                    addr -= addr % window
        return {"addr": addr, "length": length, "size": size, "burst": style,
                "id": rng.choice(ids)}

    async def worker(self, number, operations, *, seed):
        rng = random.Random(seed)
        base = number * REGION_BYTES
        ids = [2 * number, 2 * number + 1]          # interleaved ids
        for _ in range(operations):
            operation = self.random_operation(rng, base, ids)
            self.dut._log.debug("worker %d: %s", number, operation)
            if rng.random() < 0.5:
                data = bytes(rng.getrandbits(8) for _ in range(operation["length"]))
                response = await self.write(operation, data)
                assert response.resp == AxiResp.OKAY, f"write {operation}: {response.resp!r}"
            else:
                response, expected = await self.read(operation)
                assert response.resp == AxiResp.OKAY, f"read {operation}: {response.resp!r}"
                assert response.data == expected, f"read {operation} returned other bytes"

    async def traffic(self, operations, *, seed, workers=WORKERS):
        tasks = [cocotb.start_soon(self.worker(number, operations, seed=seed * 10 + number))
                 for number in range(workers)]
        for task in tasks:
            await task

    def memory_matches(self, low=0, high=WORKERS * REGION_BYTES):
        held = self.memory.read(low, high - low)
        if held != bytes(self.reference[low:high]):
            first = next(i for i in range(high - low) if held[i] != self.reference[low + i])
            raise AssertionError(f"memory differs from the reference from {low + first:#x}")

    async def read_register(self, name):
        value, error = await self.csr.read(self.registers[name].address)
        assert not error, f"reading {name}: {self.csr.last_response!r}"
        return value


def _pressure():
    return _env("MATNDP_PRESSURE", "random")


# Simulated time a random-traffic test may take: ample for the operations it runs (a
# dozen operations per worker take about 10 µs), so that a hang fails soon.
TRAFFIC_TIMEOUT_US = 200 + 20 * _env("MATNDP_OPERATIONS", 12)


@cocotb.test(timeout_time=TRAFFIC_TIMEOUT_US, timeout_unit="us")
async def random_traffic(dut):
    """Mixed bursts from interleaved ids with trigger ranges armed through AXI4-Lite: memory
    as the reference, reads as the reference, events exactly for in-range beats."""
    seed = _env("MATNDP_SEED", 1)
    bench = Bench(dut, seed=seed, pressure=_pressure())
    await bench.start()
    assert await bench.read_register("id") == MAGIC
    sb = bench.sector_bytes
    # Writes of region 0's middle, reads of region 1's first half, both in all of region 2;
    # region 3 is watched by no entry.
    await bench.arm(0, REGION_BYTES // 4, REGION_BYTES // 2, on_write=True, on_read=False)
    await bench.arm(1, REGION_BYTES, REGION_BYTES // 2, on_write=False, on_read=True)
    if bench.config.trigger.filter_entries > 2:
        await bench.arm(2, 2 * REGION_BYTES, REGION_BYTES, on_write=True, on_read=True)
    await bench.traffic(_env("MATNDP_OPERATIONS", 12), seed=seed)
    await ClockCycles(dut.clk, 50)
    bench.memory_matches()
    total = sum(bench.expected_events.values())
    assert total > 0
    assert await call_runtime(bench.runtime.event_count) == total
    for index, _ in bench.ranges:
        hits = sum(count for key, count in bench.expected_events.items() if key[0] == index)
        assert await call_runtime(bench.runtime.hits, index) == hits, f"entry {index}"
    if bench.has_events:
        extra = bench.events - bench.expected_events
        missing = bench.expected_events - bench.events
        assert not extra and not missing, \
            f"{sum(bench.events.values())} events, {sum(bench.expected_events.values())} " \
            f"expected; unexpected (entry, addr, offset, mask, write, data): {sorted(extra.items())}; " \
            f"missing: {sorted(missing.items())}"
    assert await bench.read_register("mem_read_errors") == 0
    assert await bench.read_register("mem_write_errors") == 0
    assert sb == bench.config.sector_bytes


@cocotb.test(timeout_time=200, timeout_unit="us")
async def register_errors(dut):
    """Through AXI4-Lite: DECERR outside every block and window, SLVERR for a misaligned
    address, a gap inside a block, a read-only register written, a partial write; the
    registers still answer after each."""
    bench = Bench(dut, seed=3, pressure=_pressure())
    await bench.start()
    csr, registers = bench.csr, bench.registers
    identity = registers["id"].address
    unmapped = max(block.end for block in registers.blocks)
    while registers.window_at(unmapped) is not None:
        unmapped = registers.window_at(unmapped).end
    config_register = registers["config"].address
    gap = next(address for address in range(0, 0x100, 4) if registers.at(address) is None
               and registers.window_at(address) is None)
    cases = [("read", unmapped, AxiResp.DECERR), ("write", unmapped, AxiResp.DECERR),
             ("read", identity + 2, AxiResp.SLVERR), ("write", identity + 1, AxiResp.SLVERR),
             ("read", gap, AxiResp.SLVERR), ("write", config_register, AxiResp.SLVERR)]
    for kind, address, expected in cases:
        if kind == "read":
            _, error = await csr.read(address)
        else:
            error = await csr.write(address, 0x1234_5678)
        assert error and csr.last_response == expected, \
            f"{kind} {address:#x}: {csr.last_response!r}, expected {expected!r}"
        assert await bench.read_register("id") == MAGIC
    irq = registers["irq_enable"].address
    assert await csr.write(irq, 0xFFFF, strobe=0x3)
    assert csr.last_response == AxiResp.SLVERR
    assert await bench.read_register("irq_enable") == 0, "a partial write changed the register"
    assert not await csr.write(irq, 0x5)
    assert await bench.read_register("irq_enable") == 0x5
    # The runtime sees a refused access as an error, too.
    try:
        await call_runtime(bench.runtime.bus.read, unmapped)
    except CSRAccessError:
        pass
    else:
        raise AssertionError("an unmapped read reached the runtime without an error")


@cocotb.test(timeout_time=200, timeout_unit="us")
async def unsupported_bursts(dut):
    """WRAP of 3 beats, unaligned WRAP and FIXED of 17 beats are answered with SLVERR and
    leave memory untouched; traffic afterwards is served."""
    bench = Bench(dut, seed=5, pressure=_pressure())
    await bench.start()
    sb = bench.sector_bytes
    full = sb.bit_length() - 1
    base = 0x2000
    bench.memory.write(base, bytes(range(256)) * (1024 // 256))
    before = bench.memory.read(base, 1024)
    refused = [
        dict(addr=base, length=3 * sb, size=full, burst=WRAP),
        dict(addr=base + 2, length=14, size=2, burst=WRAP),       # 4 beats, unaligned
        dict(addr=base, length=17 * sb, size=full, burst=FIXED),
    ]
    for number, burst in enumerate(refused):
        response = await bench.gpu.write(burst["addr"], bytes(burst["length"]), awid=number,
                                         burst=AxiBurstType(burst["burst"]), size=burst["size"])
        assert response.resp == AxiResp.SLVERR, f"write {burst}: {response.resp!r}"
        response = await bench.gpu.read(burst["addr"], burst["length"], arid=number,
                                        burst=AxiBurstType(burst["burst"]), size=burst["size"])
        assert response.resp == AxiResp.SLVERR, f"read {burst}: {response.resp!r}"
        assert response.data == bytes(len(response.data)), "a refused read returned data"
    assert bench.memory.read(base, 1024) == before
    bench.reference[base:base + 1024] = before
    await bench.traffic(4, seed=5, workers=2)
    bench.memory_matches(0, 2 * REGION_BYTES)


@cocotb.test(timeout_time=400, timeout_unit="us")
async def memory_errors(dut):
    """Memory answers some sectors with SLVERR or DECERR: each GPU transaction gets the
    code of the sector it met, and MEM_READ_ERRORS / MEM_WRITE_ERRORS count every one."""
    rng = random.Random(7)
    config = config_from_environment(TRIGGER_SLICE)
    sb = config.sector_bytes
    span = 64                                   # sectors of the test's region
    faults = {sector: rng.choice([AxiResp.SLVERR, AxiResp.DECERR])
              for sector in rng.sample(range(span), 16)}
    bench = Bench(dut, seed=7, pressure=_pressure(), faults=faults)
    await bench.start()
    read_errors = write_errors = 0
    for number in range(60):
        first = rng.randrange(span - 3)
        sectors = rng.choice([1, 1, 2, 3])
        size = rng.randint(0, sb.bit_length() - 1)
        addr = first * sb + rng.randrange(sb) if sectors == 1 else first * sb
        length = min(rng.randint(1, sectors * sb), (first + sectors) * sb - addr)
        operation = dict(addr=addr, length=length, size=size, burst=INCR, id=number % 4)
        met = [faults.get(beat // sb) for beat, _, _ in bench.beats(operation)]
        errors = [code for code in met if code is not None]
        if rng.random() < 0.5:
            data = bytes(rng.getrandbits(8) for _ in range(length))
            response = await bench.write(operation, data, faults=faults)
            # One burst: the first error among its beats, in order.
            assert response.resp == (errors[0] if errors else AxiResp.OKAY), \
                f"write {operation}: {response.resp!r}, met {met}"
            write_errors += len(errors)
        else:
            response, expected = await bench.read(operation)
            assert response.resp == (errors[-1] if errors else AxiResp.OKAY), \
                f"read {operation}: {response.resp!r}, met {met}"
            if not errors:
                assert response.data == expected
            read_errors += len(errors)
    assert read_errors and write_errors
    await ClockCycles(dut.clk, 10)
    assert await bench.read_register("mem_read_errors") == read_errors
    assert await bench.read_register("mem_write_errors") == write_errors
    bench.memory_matches(0, span * sb)


@cocotb.test(timeout_time=400, timeout_unit="us")
async def reset_mid_traffic(dut):
    """A reset while bursts are in flight on both sides: afterwards the counters are clear,
    the memory side sees whole transfers only, and new traffic is served exactly."""
    bench = Bench(dut, seed=9, pressure=_pressure())
    await bench.start()
    rng = random.Random(9)
    sb = bench.sector_bytes
    for number in range(24):
        addr = rng.randrange(0, REGION_BYTES - 600)
        length = rng.randint(1, 600)
        if number % 2:
            bench.gpu.init_write(addr, bytes(rng.getrandbits(8) for _ in range(length)),
                                 awid=number % 8)
        else:
            bench.gpu.init_read(addr, length, arid=number % 8)
    await ClockCycles(dut.clk, rng.randint(60, 120))
    await bench.reset(cycles=3)

    handshakes = Counter()

    async def count_memory_handshakes():
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            for channel in ("aw", "w", "b", "ar", "r"):
                if int(getattr(dut, f"m_axi_{channel}valid").value) and \
                        int(getattr(dut, f"m_axi_{channel}ready").value):
                    handshakes[channel] += 1
    watcher = cocotb.start_soon(count_memory_handshakes())
    for name in ("event_count", "stall_cycles", "mem_read_errors", "mem_write_errors"):
        assert await bench.read_register(name) == 0, f"{name} after reset"
    # The reference of the region used after the reset starts as memory is now.
    low, high = REGION_BYTES, WORKERS * REGION_BYTES
    bench.reference[low:high] = bench.memory.read(low, high - low)
    tasks = [cocotb.start_soon(bench.worker(number, 6, seed=90 + number))
             for number in range(1, WORKERS)]
    for task in tasks:
        await with_timeout(task, 300, "us")
    await ClockCycles(dut.clk, 20)
    watcher.cancel()
    bench.memory_matches(low, high)
    assert handshakes["aw"] == handshakes["w"] == handshakes["b"], handshakes
    assert handshakes["ar"] == handshakes["r"], handshakes
    assert sb and handshakes["aw"] and handshakes["ar"]


@cocotb.test(timeout_time=2, timeout_unit="ms", skip=config_from_environment(TRIGGER_SLICE).engine is None)
async def windows(dut):
    """Every word of every window written and read back through AXI4-Lite by the runtime."""
    bench = Bench(dut, seed=11, pressure=_pressure())
    await bench.start()
    rng = random.Random(11)
    for window in bench.registers.windows:
        words = [rng.getrandbits(32) for _ in range(window.size // 4)]
        await call_runtime(bench.runtime.write_window, window.name, 0, words)
        read = await call_runtime(bench.runtime.read_window, window.name, 0, len(words))
        assert [int(word) for word in read] == words, f"window {window.name}"
