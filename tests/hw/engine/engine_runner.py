"""Kernels through the :class:`~matndp.hw.engine.engine.Engine` alone, in Amaranth's
simulator: the testbench programs it through its instruction and argument windows and its
entry configuration, offers the trigger events, and serves its memory port from a Python
model of the memory image. Every stream pauses at random (events, memory requests and
read responses), and memory answers reads after random latencies, out of order.

This is the engine's fast loop: a kernel of a few sectors runs in seconds, against the
instruction-set simulator, without a Verilator build of the slice.
"""

import random
from dataclasses import dataclass

import numpy as np

from matndp.hw.engine.engine import Engine
from matndp.hw.engine.layouts import ErrorCause
from matndp.hw.layouts import ResponseStatus

from ..streams import shared, simulate


__all__ = ["EngineEntry", "EngineRun", "run_engine"]


@dataclass(frozen=True)
class EngineEntry:
    """What filter entry 0 runs: instruction words and the entry points in them, the
    argument block, the completions after which the finalizer runs and the µthreads the
    initializer and the finalizer run as."""
    words: tuple
    main_pc: int
    init_pc: int = None
    final_pc: int = None
    ordered: bool = False
    arguments: tuple = ()
    expected: int = 0
    init_threads: int = 1
    final_threads: int = 1


@dataclass
class EngineRun:
    cycles: int
    complete: bool
    completed: int
    issued: int
    error: tuple          # (entry, pc, ErrorCause) of the first error, or None
    stopped: bool


def _sector_value(data_bytes):
    return int.from_bytes(bytes(np.asarray(data_bytes, dtype=np.uint8)), "little")


def _mask_value(mask_bools):
    return sum(1 << index for index, bit in enumerate(np.asarray(mask_bools).reshape(-1)) if bit)


class MemoryModel:
    """The memory image behind the engine's port: writes land as the request is taken,
    reads take their data then and answer after 1 … ``latency`` cycles, in random order."""

    def __init__(self, memory, sector_bytes, rng, pause, latency):
        self.memory = memory
        self.sector_bytes = sector_bytes
        self.rng = rng
        self.pause = pause
        self.latency = latency
        self.waiting = []           # (due cycle, id, data)
        self.offer = None
        self.requests = 0

    def write(self, address, data, mask):
        raw = bytearray(self.memory.read(address, np.uint8, self.sector_bytes).tobytes())
        for index in range(self.sector_bytes):
            if mask >> index & 1:
                raw[index] = data >> (8 * index) & 0xFF
        self.memory.write(address, bytes(raw))

    def drive(self, ctx, port, cycle):
        ctx.set(port.req.ready, self.rng.random() >= self.pause)
        if self.offer is None:
            due = [item for item in self.waiting if item[0] <= cycle]
            if due and self.rng.random() >= self.pause:
                self.offer = self.rng.choice(due)
                self.waiting.remove(self.offer)
        ctx.set(port.resp.valid, self.offer is not None)
        if self.offer is not None:
            ctx.set(port.resp.payload, {"data": self.offer[2], "id": self.offer[1],
                                        "status": ResponseStatus.OKAY})

    def sample(self, ctx, port, cycle):
        if self.offer is not None and ctx.get(port.resp.ready):
            self.offer = None
        if ctx.get(port.req.valid) and ctx.get(port.req.ready):
            request = ctx.get(port.req.payload)
            self.requests += 1
            address = int(request.addr)
            if request.write:
                self.write(address, int(request.data), int(request.mask))
            else:
                data = _sector_value(self.memory.read(address, np.uint8, self.sector_bytes))
                self.waiting.append((cycle + self.rng.randrange(1, self.latency + 1),
                                     int(request.id), data))


async def _bus_write(ctx, bus, address, word):
    ctx.set(bus.addr, address)
    ctx.set(bus.w_data, word)
    ctx.set(bus.w_en, 1)
    await ctx.tick()
    ctx.set(bus.w_en, 0)
    while not ctx.get(bus.ack):
        await ctx.tick()
    assert not ctx.get(bus.err), f"the engine refused a write at {address:#x}"
    await ctx.tick()


async def _write_words(ctx, bus, words):
    for index, word in enumerate(words):
        await _bus_write(ctx, bus, 8 * index, int(word) & 0xFFFF_FFFF)
        await _bus_write(ctx, bus, 8 * index + 4, int(word) >> 32)


def run_engine(config, entry, memory, events, *, base, seed=1, pause=0.3, latency=20,
               cycles=60000, watchdog=1 << 20):
    """Run ``entry`` on an :class:`Engine` of ``config`` over ``memory`` (a
    :class:`~matndp.host.kernels.memory.Memory`, changed in place) for ``events`` (a
    :class:`~matndp.host.kernels.iss.TriggerEvents` of entry 0, whose range starts at
    ``base``); every stream pauses with probability ``pause``. Returns an :class:`EngineRun` once the entry is complete or
    stopped, all its µthreads ended."""
    dut = shared(Engine, config)
    rng = random.Random(seed)
    model = MemoryModel(memory, config.sector_bytes, rng, pause, latency)
    result = {}

    async def bench(ctx):
        await _write_words(ctx, dut.imem_bus, entry.words)
        await _write_words(ctx, dut.args_bus, entry.arguments)
        ctx.set(dut.window_base, memory.base)
        ctx.set(dut.window_end, memory.end)
        ctx.set(dut.watchdog, watchdog)
        ctx.set(dut.entry_config[0], {
            "main_pc": entry.main_pc, "init_pc": entry.init_pc or 0,
            "final_pc": entry.final_pc or 0, "has_init": entry.init_pc is not None,
            "has_final": entry.final_pc is not None, "ordered": entry.ordered,
            "arg_block": 0, "expected": entry.expected, "init_threads": entry.init_threads,
            "final_threads": entry.final_threads})
        ctx.set(dut.arm, 1)
        await ctx.tick()
        ctx.set(dut.arm, 0)
        pending = list(range(len(events)))
        offer = None
        issued = 0
        for cycle in range(cycles):
            if offer is None and pending and rng.random() >= pause:
                offer = pending.pop(0)
            ctx.set(dut.events.valid, offer is not None)
            if offer is not None:
                address = int(events.addr[offer])
                ctx.set(dut.events.payload, {
                    "entry": 0, "addr": address, "offset": address - base,
                    "data": _sector_value(events.data[offer]),
                    "mask": _mask_value(events.mask[offer]), "write": bool(events.write[offer])})
            model.drive(ctx, dut.mem, cycle)
            status = ctx.get(dut.status[0])
            done = (status.complete or status.stopped) and not pending and offer is None and \
                ctx.get(dut.active) == 0
            if done:
                break
            issued += ctx.get(dut.issued)
            if offer is not None and ctx.get(dut.events.ready):
                if events.write[offer]:
                    # The GPU's write passes on to memory as its event leaves the trigger.
                    model.write(int(events.addr[offer]), _sector_value(events.data[offer]),
                                _mask_value(events.mask[offer]))
                offer = None
            model.sample(ctx, dut.mem, cycle)
            await ctx.tick()
        status = ctx.get(dut.status[0])
        error = None
        if ctx.get(dut.error_recorded):
            first = ctx.get(dut.first_error)
            error = (int(first.entry), int(first.pc), ErrorCause(first.cause))
        result["run"] = EngineRun(cycles=cycle, complete=bool(status.complete),
                                  completed=int(status.completed), issued=issued, error=error,
                                  stopped=bool(status.stopped))

    simulate(dut, bench, cycles=cycles + 100000)
    return result["run"]
