"""Register-bus models for Amaranth simulator testbenches: an initiator that waits for the
acknowledgement, a memory behind a window answering after a random wait, behaviours for
every hardware-owned field of a register file, and a decoder with a register file behind
it whose windows are ports.

Both models sample the bus at the clock edge (``ctx.tick().sample``), so they see what was
driven during the cycle that ends there whatever order the testbenches run in.
"""

import random

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from matndp.hw.bus.action import Counter, Status, StickyFlag
from matndp.hw.bus.decoder import BusDecoder
from matndp.hw.bus.map import Access
from matndp.hw.bus.register_file import RegisterFile
from matndp.hw.bus.signature import CSRBusSignature


# Cycles from a strobe to the register file's answer (docs/csr.md).
REGISTER_LATENCY = 3


def attach_behaviours(registers):
    """A behaviour for every hardware-owned field of the RegisterFile ``registers``, by access
    kind; returns them by (register name, field name)."""
    actions = {}
    for register in registers.register_map:
        for field in register.fields:
            make = {Access.RO: Status, Access.W1C: StickyFlag, Access.LOAD: Counter}.get(field.access)
            if make:
                actions[register.name, field.name] = registers.attach(register.name, field.name,
                                                                      make(field.width))
    return actions


class DecoderHarness(wiring.Component):
    """A :class:`BusDecoder` in front of the :class:`RegisterFile` of ``register_map``
    (behaviours attached to every hardware-owned field, in :attr:`actions`), with the buses
    of the windows it routes as ports."""

    def __init__(self, register_map, windows=None):
        self.register_map = register_map
        self.decoder = BusDecoder(register_map, windows=windows)
        self.registers = RegisterFile(register_map)
        self.actions = attach_behaviours(self.registers)
        super().__init__({
            "bus": In(CSRBusSignature(register_map.addr_width)),
            "windows": Out(self.decoder.windows.signature),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.decoder = self.decoder
        m.submodules.registers = self.registers
        connect(m, flipped(self.bus), self.decoder.bus)
        connect(m, self.decoder.registers, self.registers.bus)
        for name in self.decoder.routed:
            connect(m, getattr(self.decoder.windows, name), flipped(getattr(self.windows, name)))
        return m


class Initiator:
    """Issues one access at a time on ``bus`` and waits for its ``ack``, at most ``limit``
    cycles. ``latencies`` records the cycles from each strobe to its ``ack``."""

    def __init__(self, bus, *, limit=32):
        self.bus = bus
        self.limit = limit
        self.latencies = []

    async def access(self, ctx, address, write=False, data=0):
        """``(read data, error)`` of one access."""
        bus = self.bus
        ctx.set(bus.addr, address)
        ctx.set(bus.w_data, data)
        ctx.set(bus.w_en, write)
        ctx.set(bus.r_en, not write)
        for cycle in range(self.limit + 1):
            _, _, ack, r_data, err = await ctx.tick().sample(bus.ack, bus.r_data, bus.err)
            if cycle == 0:
                ctx.set(bus.w_en, 0)
                ctx.set(bus.r_en, 0)
            if ack:
                assert cycle > 0, f"{address:#x} acknowledged in the cycle of its strobe"
                self.latencies.append(cycle)
                return r_data, bool(err)
        raise AssertionError(f"no acknowledgement within {self.limit} cycles for the "
                             f"{'write' if write else 'read'} of {address:#x}")

    async def read(self, ctx, address):
        return await self.access(ctx, address)

    async def write(self, ctx, address, data):
        _, error = await self.access(ctx, address, True, data)
        return error

    async def idle(self, ctx, cycles):
        """Let ``cycles`` cycles pass without an access; ``bus.ack`` must stay low."""
        for _ in range(cycles):
            _, _, ack = await ctx.tick().sample(self.bus.ack)
            assert not ack, "an acknowledgement without an access"


class WindowTarget:
    """``size`` bytes of memory behind a window's bus (as its target), answering each access
    after a wait drawn from ``latency`` cycles, with garbage on ``r_data`` and ``err``
    outside its answers. ``accesses`` records ``(write, offset)`` of each strobe seen."""

    def __init__(self, bus, size, *, latency=(1, 5), seed=0):
        self.bus = bus
        self.words = [0] * (size // 4)
        self.latency = latency
        self.random = random.Random(seed)
        self.accesses = []
        self.answers = []

    async def run(self, ctx):
        bus = self.bus
        while True:
            _, _, r_en, w_en, addr, w_data = await ctx.tick().sample(
                bus.r_en, bus.w_en, bus.addr, bus.w_data)
            if not (r_en or w_en):
                continue
            assert not (r_en and w_en), f"read and write strobed together at {addr:#x}"
            write = bool(w_en)
            self.accesses.append((write, addr))
            wait = self.random.randint(*self.latency)
            for _ in range(wait - 1):
                _, _, r_en, w_en = await ctx.tick().sample(bus.r_en, bus.w_en)
                assert not (r_en or w_en), "a new access before the last was answered"
            assert addr % 4 == 0, f"misaligned {addr:#x} reached the window"
            if write:
                self.words[addr // 4] = w_data
            ctx.set(bus.ack, 1)
            ctx.set(bus.err, 0)
            ctx.set(bus.r_data, self.random.getrandbits(32) if write else self.words[addr // 4])
            self.answers.append(wait)
            _, _, r_en, w_en = await ctx.tick().sample(bus.r_en, bus.w_en)
            assert not (r_en or w_en), "a new access in the cycle of the answer"
            ctx.set(bus.ack, 0)
            ctx.set(bus.err, self.random.getrandbits(1))
            ctx.set(bus.r_data, self.random.getrandbits(32))
