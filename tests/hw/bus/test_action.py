# amaranth: UnusedElaboratable=no
"""Field behaviours in Amaranth's simulator, against the documented semantics."""

import random

import pytest
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from matndp.hw.bus.action import ClearableStatus, Counter, FieldPort, Status, StickyFlag
from matndp.hw.bus.map import Access


def simulate(dut, bench, *, clocked=True):
    simulator = Simulator(dut)
    if clocked:
        simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()


# --- the port ---------------------------------------------------------------------------------------

def test_port_signature_follows_the_access_kind():
    assert dict(FieldPort.Signature(4, Access.RO).members) == {"r_data": In(4)}
    for access in (Access.RW, Access.LOAD, Access.W1C):
        assert dict(FieldPort.Signature(8, access).members) == \
            {"r_data": In(8), "w_stb": Out(1), "w_data": Out(8)}
    assert FieldPort.Signature(8, Access.LOAD) == FieldPort.Signature(8, Access.LOAD)
    assert FieldPort.Signature(8, Access.LOAD) != FieldPort.Signature(8, Access.W1C)
    assert FieldPort.Signature(8, Access.LOAD) != FieldPort.Signature(7, Access.LOAD)
    assert repr(FieldPort.Signature(8, Access.RO)) == "FieldPort.Signature(8, Access.RO)"
    assert isinstance(FieldPort.Signature(8, Access.RO).create(), FieldPort)


@pytest.mark.parametrize("make, error, message", [
    (lambda: FieldPort.Signature(4, "ro"), TypeError, "access must be an Access, not 'ro'"),
    (lambda: Status(0), ValueError, "Status: width must be a positive int, not 0"),
    (lambda: StickyFlag(1.5), ValueError, "StickyFlag: width must be a positive int"),
    (lambda: Counter(8, increment_width=0), ValueError, "increment_width must be in 1..8, not 0"),
    (lambda: Counter(8, increment_width=9), ValueError, "increment_width must be in 1..8, not 9"),
    (lambda: Counter(-2), ValueError, "Counter: width must be a positive int, not -2"),
])
def test_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_actions_declare_their_kind():
    assert (Counter(16).width, Counter(16).access) == (16, Access.LOAD)
    assert (StickyFlag(3).width, StickyFlag(3).access) == (3, Access.W1C)
    assert (Status(5).width, Status(5).access) == (5, Access.RO)


# --- status -----------------------------------------------------------------------------------------

def test_status_reads_what_hardware_drives():
    dut = Status(6)

    async def bench(ctx):
        for value in (0, 0x2A, 0x3F, 1):
            ctx.set(dut.status, value)
            assert ctx.get(dut.port.r_data) == value
            await ctx.delay(1e-8)
    simulate(dut, bench, clocked=False)


# --- counter ----------------------------------------------------------------------------------------

def test_counter_counts_a_cycle_late_and_wraps_around():
    dut = Counter(4, increment_width=2)

    async def bench(ctx):
        ctx.set(dut.increment, 1)
        await ctx.tick()
        ctx.set(dut.increment, 0)
        assert ctx.get(dut.count) == 0          # still in the register stage
        await ctx.tick()
        assert ctx.get(dut.count) == 1 and ctx.get(dut.port.r_data) == 1
        ctx.set(dut.increment, 3)
        for expected in (1, 1, 4, 7, 10, 13, 0, 3):  # the stage, then +3 a cycle; 16 wraps to 0
            assert ctx.get(dut.count) == expected
            await ctx.tick()
    simulate(dut, bench)


def test_a_load_drops_the_pending_increment_and_keeps_the_one_of_its_cycle():
    dut = Counter(8, increment_width=2)

    async def bench(ctx):
        ctx.set(dut.increment, 2)               # cycle t - 1: will be pending at the load
        await ctx.tick()
        ctx.set(dut.increment, 1)               # cycle t: the load's own cycle
        ctx.set(dut.port.w_stb, 1)
        ctx.set(dut.port.w_data, 100)
        await ctx.tick()
        ctx.set(dut.port.w_stb, 0)
        ctx.set(dut.increment, 0)
        assert ctx.get(dut.count) == 100
        await ctx.tick()
        assert ctx.get(dut.count) == 101
        await ctx.tick()
        assert ctx.get(dut.count) == 101
    simulate(dut, bench)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_counter_against_its_definition_under_random_increments_and_loads(seed):
    """After a load in cycle t the count is the loaded value plus every increment of cycles
    t, t + 1, ... that has left the register stage (those up to two cycles before now)."""
    width, increment_width = 6, 2
    dut = Counter(width, increment_width=increment_width)
    generator = random.Random(seed)
    cycles = 400
    increments = [generator.randrange(1 << increment_width) if generator.random() < 0.7 else 0
                  for _ in range(cycles)]
    loads = {t: generator.randrange(1 << width) for t in range(cycles) if generator.random() < 0.05}

    def expected(now):
        """The count read after ``now`` clock edges."""
        last_load = max((t for t in loads if t < now), default=None)
        start, value = (0, 0) if last_load is None else (last_load, loads[last_load])
        return (value + sum(increments[start:max(start, now - 1)])) % (1 << width)

    async def bench(ctx):
        for now in range(cycles):
            assert ctx.get(dut.count) == expected(now), f"cycle {now}"
            ctx.set(dut.increment, increments[now])
            ctx.set(dut.port.w_stb, now in loads)
            ctx.set(dut.port.w_data, loads.get(now, generator.randrange(1 << width)))
            await ctx.tick()
    simulate(dut, bench)


# --- sticky flags -----------------------------------------------------------------------------------

async def sticky_cycle(ctx, dut, *, set=0, w_stb=0, w_data=0):
    """One cycle with these inputs; returns the flags after it (also what the bus reads)."""
    ctx.set(dut.set, set)
    ctx.set(dut.port.w_stb, w_stb)
    ctx.set(dut.port.w_data, w_data)
    await ctx.tick()
    assert ctx.get(dut.port.r_data) == ctx.get(dut.flags)
    return ctx.get(dut.flags)


def test_sticky_flags_set_hold_and_clear_by_writing_one():
    dut = StickyFlag(3)

    async def bench(ctx):
        assert await sticky_cycle(ctx, dut, set=0b101) == 0b101
        for _ in range(3):
            assert await sticky_cycle(ctx, dut) == 0b101
        # A write clears the bits written as 1 and only those.
        assert await sticky_cycle(ctx, dut, w_stb=1, w_data=0b110) == 0b001
        # Write data without the strobe clears nothing.
        assert await sticky_cycle(ctx, dut, w_data=0b111) == 0b001
    simulate(dut, bench)


def test_setting_wins_over_clearing_in_the_same_cycle():
    dut = StickyFlag(2)

    async def bench(ctx):
        assert await sticky_cycle(ctx, dut, set=0b11) == 0b11
        assert await sticky_cycle(ctx, dut, set=0b01, w_stb=1, w_data=0b11) == 0b01
        assert await sticky_cycle(ctx, dut, w_stb=1, w_data=0b11) == 0
    simulate(dut, bench)


# --- clearable status --------------------------------------------------------------------------------

def test_clearable_status_reads_hardware_and_pulses_clear_only_with_a_write():
    dut = ClearableStatus(3)

    async def bench(ctx):
        ctx.set(dut.status, 0b101)
        ctx.set(dut.port.w_data, 0b110)
        assert ctx.get(dut.port.r_data) == 0b101
        assert ctx.get(dut.clear) == 0       # the data of no write
        ctx.set(dut.port.w_stb, 1)
        assert ctx.get(dut.clear) == 0b110
        ctx.set(dut.port.w_stb, 0)
        ctx.set(dut.status, 0b010)
        assert ctx.get(dut.clear) == 0 and ctx.get(dut.port.r_data) == 0b010
        await ctx.delay(1e-8)
    simulate(dut, bench, clocked=False)
