"""The test helpers' reused simulator (``tests/hw/streams.py``): a shared design's every run
starts from the design's initial state, whatever the run before it did or how it ended."""

import pytest
from amaranth import Module, Signal
from amaranth.hdl import Elaboratable
from amaranth.lib.memory import Memory

from .streams import shared, simulate


class Counter(Elaboratable):
    """Counts cycles while ``enable``; writes ``count`` into memory word 1 when ``store``."""

    def __init__(self, width=8):
        self.enable = Signal()
        self.store = Signal()
        self.count = Signal(width)
        self.memory = Memory(shape=width, depth=4, init=[7, 9, 11, 13])

    def elaborate(self, platform):
        m = Module()
        m.submodules.memory = self.memory
        write = self.memory.write_port()
        m.d.comb += [write.addr.eq(1), write.data.eq(self.count), write.en.eq(self.store)]
        with m.If(self.enable):
            m.d.sync += self.count.eq(self.count + 1)
        return m


async def count_cycles(ctx, dut, cycles, *, store=False):
    assert ctx.get(dut.count) == 0 and ctx.get(dut.memory.data[1]) == 9, "not from reset"
    ctx.set(dut.enable, 1)
    await ctx.tick().repeat(cycles)
    ctx.set(dut.enable, 0)
    ctx.set(dut.store, store)
    await ctx.tick()
    ctx.set(dut.store, 0)
    assert ctx.get(dut.count) == cycles


def test_the_same_arguments_give_the_same_design():
    assert shared(Counter, 8) is shared(Counter, 8)
    assert shared(Counter, width=8) is shared(Counter, width=8)
    assert shared(Counter, 8) is not shared(Counter, 9)


def test_every_run_starts_from_the_initial_state():
    dut = shared(Counter, 6)
    seen = []

    async def stored(ctx):
        await count_cycles(ctx, dut, 5, store=True)
        await ctx.tick()
        seen.append(ctx.get(dut.memory.data[1]))

    simulate(dut, stored, cycles=50)
    assert seen == [5]
    for cycles in (3, 7):
        async def counted(ctx, cycles=cycles):
            await count_cycles(ctx, dut, cycles, store=True)
            seen.append(cycles)
        simulate(dut, counted, cycles=50)
    assert seen == [5, 3, 7]


def test_a_failed_run_leaves_nothing_behind():
    dut = shared(Counter, 5)

    async def failing(ctx):
        ctx.set(dut.enable, 1)
        await ctx.tick().repeat(4)
        raise RuntimeError("planted")

    with pytest.raises(RuntimeError, match="planted"):
        simulate(dut, failing, cycles=50)
    ran = []

    async def counted(ctx):
        await count_cycles(ctx, dut, 2)
        ran.append(True)

    simulate(dut, counted, cycles=50)
    assert ran == [True]


def test_a_run_may_bring_more_testbenches_than_the_last():
    dut = shared(Counter, 4)
    order = []

    def noting(name, ticks):
        async def testbench(ctx):
            await ctx.tick().repeat(ticks)
            order.append(name)
        return testbench

    simulate(dut, noting("a", 1), cycles=20)
    simulate(dut, noting("b", 3), noting("c", 1), noting("d", 2), cycles=20)
    assert order == ["a", "c", "d", "b"]
    simulate(dut, noting("e", 1), cycles=20)
    assert order[-1] == "e"


@pytest.mark.parametrize("build", [shared, lambda build, *args: build(*args)],
                         ids=["shared", "own"])
def test_a_run_past_its_cycles_fails(build):
    dut = build(Counter, 7)

    async def endless(ctx):
        while True:
            await ctx.tick()

    with pytest.raises(AssertionError, match="did not finish within 30 cycles"):
        simulate(dut, endless, cycles=30)
