# amaranth: UnusedElaboratable=no
"""The AXI4-Lite register bridge in Amaranth's simulator, in front of a decoder and register
file of the slice's map whose windows are memories answering after random waits: every
word of every window written and read back, registers, each error response, partial
writes, random pauses on all five channels, and the constructor's error."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.csr_map import MAGIC, register_map
from matndp.hw.fpga.axi import AXI4LiteSignature
from matndp.hw.fpga.csr_bridge import AXILiteCSRBridge
from matndp.hw.layouts import ResponseStatus

from amaranth.sim import Simulator

from ..bus.models import DecoderHarness, WindowTarget


CONFIG = NDPConfig(engine=EngineConfig(instruction_words=64, argument_blocks=1, scratchpad_bytes=256))
MAP = register_map(CONFIG)
OKAY, SLVERR, DECERR = (ResponseStatus.OKAY.value, ResponseStatus.SLAVE_ERROR.value,
                        ResponseStatus.DECODE_ERROR.value)


class Harness(wiring.Component):
    def __init__(self):
        self.bridge = AXILiteCSRBridge(MAP)
        self.targets = DecoderHarness(MAP)
        super().__init__({
            "axil": In(AXI4LiteSignature(addr_width=MAP.addr_width)),
            "windows": Out(self.targets.windows.signature),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.bridge = self.bridge
        m.submodules.targets = self.targets
        connect(m, flipped(self.axil), self.bridge.axil)
        connect(m, self.bridge.csr, self.targets.bus)
        connect(m, self.targets.windows, flipped(self.windows))
        return m


class LiteMaster:
    """One access at a time with random pauses before each valid and on each ready."""

    def __init__(self, bus, seed):
        self.bus = bus
        self.random = random.Random(seed)

    async def _pause(self, ctx):
        while self.random.random() < 0.3:
            await ctx.tick()

    async def _handshake(self, ctx, valid, ready):
        ctx.set(valid, 1)
        await ctx.tick().until(ready)
        ctx.set(valid, 0)

    async def _response(self, ctx, valid, ready, *fields):
        while True:
            take = self.random.random() >= 0.3
            ctx.set(ready, take)
            _, _, is_valid, *values = await ctx.tick().sample(valid, *fields)
            if is_valid and take:
                ctx.set(ready, 0)
                return values

    async def read(self, ctx, address):
        bus = self.bus
        await self._pause(ctx)
        ctx.set(bus.araddr, address)
        await self._handshake(ctx, bus.arvalid, bus.arready)
        data, resp = await self._response(ctx, bus.rvalid, bus.rready, bus.rdata, bus.rresp)
        return data, resp.value

    async def write(self, ctx, address, data, strobe=0xF):
        bus = self.bus
        await self._pause(ctx)
        ctx.set(bus.awaddr, address)
        ctx.set(bus.wdata, data)
        ctx.set(bus.wstrb, strobe)
        ctx.set(bus.awvalid, 1)
        ctx.set(bus.wvalid, 1)
        await ctx.tick().until(bus.awready)
        ctx.set(bus.awvalid, 0)
        ctx.set(bus.wvalid, 0)
        (resp,) = await self._response(ctx, bus.bvalid, bus.bready, bus.bresp)
        return resp.value


def _run(bench_body, seed=1, cycles=200_000):
    dut = Harness()
    master = LiteMaster(dut.axil, seed)
    targets = {window.name: WindowTarget(getattr(dut.windows, window.name), window.size, seed=seed + i)
               for i, window in enumerate(MAP.windows)}
    done = []

    async def bench(ctx):
        await bench_body(ctx, master)
        done.append(True)

    async def time_limit(ctx):
        for _ in range(cycles):
            if done:
                return
            await ctx.tick()
        raise AssertionError(f"the accesses did not finish within {cycles} cycles")

    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.add_testbench(time_limit)
    for target in targets.values():
        simulator.add_testbench(target.run, background=True)
    simulator.run()
    assert done
    return targets


def test_every_window_word_written_and_read_back():
    rng = random.Random(3)
    written = {}

    async def body(ctx, master):
        for window in MAP.windows:
            words = [rng.getrandbits(32) for _ in range(window.size // 4)]
            written[window.name] = words
            for index, word in enumerate(words):
                assert await master.write(ctx, window.base + 4 * index, word) == OKAY
            for index, word in enumerate(words):
                assert await master.read(ctx, window.base + 4 * index) == (word, OKAY)
    targets = _run(body)
    for name, words in written.items():
        assert targets[name].words == words
        assert max(targets[name].answers) > 1          # waits longer than one cycle happened


def test_registers_and_error_responses():
    unmapped = max(block.end for block in MAP.blocks)
    assert MAP.window_at(unmapped) is None
    irq = MAP["irq_enable"].address

    async def body(ctx, master):
        assert await master.read(ctx, MAP["id"].address) == (MAGIC, OKAY)
        assert (await master.read(ctx, unmapped))[1] == DECERR
        assert await master.write(ctx, unmapped, 1) == DECERR
        assert (await master.read(ctx, MAP["id"].address + 1))[1] == SLVERR     # misaligned
        assert await master.write(ctx, MAP["config"].address, 1) == SLVERR     # read-only
        assert await master.write(ctx, irq, 0x3, strobe=0x1) == SLVERR         # partial
        assert await master.read(ctx, irq) == (0, OKAY)
        assert await master.write(ctx, irq, 0x3) == OKAY
        assert await master.read(ctx, irq) == (0x3, OKAY)
        window = MAP.windows[0]
        assert (await master.read(ctx, window.base + 2))[1] == SLVERR          # misaligned
    _run(body)


def test_refuses_what_is_not_a_register_map():
    with pytest.raises(TypeError, match="is not a RegisterMap"):
        AXILiteCSRBridge(CONFIG)
