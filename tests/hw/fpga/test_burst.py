"""Burst splitting in Amaranth's simulator: random bursts of every type, size, length and
alignment, with random back-pressure on both streams, against the specification's beat
addresses and byte lanes (sim/golden/axi.py)."""

import random

import pytest

from matndp.hw.config import NDPConfig
from matndp.hw.fpga.burst import BurstBeats

from ..streams import simulate
from matndp.sim.golden.axi import beat_addresses, is_refused, lanes


def _commands(rng, config, count):
    offset_bits = config.offset_bits
    commands = []
    for number in range(count):
        burst = rng.choice([0, 1, 1, 2, 2, 3])
        size = rng.randint(0, min(7, offset_bits + (1 if rng.random() < 0.1 else 0)))
        if burst == 2 and rng.random() < 0.8:
            length = rng.choice([1, 3, 7, 15])
        else:
            length = rng.choice([0, 1, 2, rng.randrange(256), 255, 15, 16])
        addr = rng.getrandbits(config.addr_width)
        if burst == 2 and rng.random() < 0.8:
            addr -= addr % (1 << size)
        # Keep incrementing bursts inside the address space.
        addr = min(addr, (1 << config.addr_width) - ((length + 2) << max(size, 0)) - 1)
        commands.append({"id": number % 16, "addr": addr, "len": length, "size": size,
                         "burst": burst})
    return commands


def _expected(config, command):
    sb = config.sector_bytes
    refused = is_refused(command["addr"], command["len"], command["size"], command["burst"], sb)
    addresses = beat_addresses(command["addr"], command["len"], command["size"], command["burst"])
    beats = []
    for index, address in enumerate(addresses):
        beat = {"id": command["id"], "last": int(index == command["len"]), "refused": int(refused)}
        if not refused:
            beat.update(sector=address - address % sb, lanes=lanes(address, command["size"], sb))
        beats.append(beat)
    return beats


@pytest.mark.parametrize("config", [NDPConfig(engine=None),
                                    NDPConfig(sector_bytes=4, addr_width=16, engine=None),
                                    NDPConfig(sector_bytes=128, engine=None)],
                         ids=["32-byte", "4-byte", "128-byte"])
def test_beats_follow_the_specification(config):
    rng = random.Random(config.sector_bytes)
    commands = _commands(rng, config, 120)
    dut = BurstBeats(config, 4)
    expected = [beat for command in commands for beat in _expected(config, command)]
    seen = []

    async def source(ctx):
        for command in commands:
            while rng.random() < 0.3:
                await ctx.tick()
            ctx.set(dut.command.payload, command)
            ctx.set(dut.command.valid, 1)
            await ctx.tick().until(dut.command.ready)
            ctx.set(dut.command.valid, 0)

    async def sink(ctx):
        pause = random.Random(5)
        while len(seen) < len(expected):
            ready = pause.random() >= 0.3
            ctx.set(dut.beats.ready, ready)
            _, _, valid, payload = await ctx.tick().sample(dut.beats.valid, dut.beats.payload)
            if valid and ready:
                beat = {"id": payload.id, "last": payload.last, "refused": payload.refused}
                if not payload.refused:
                    beat.update(sector=payload.sector, lanes=payload.lanes)
                seen.append(beat)

    simulate(dut, source, sink, cycles=40 * len(expected) + 1000)
    assert seen == expected
    assert any(beat["refused"] for beat in expected) and not all(beat["refused"] for beat in expected)


def test_back_to_back_bursts_leave_no_gap():
    config = NDPConfig(engine=None)
    dut = BurstBeats(config, 4)
    commands = [{"id": 1, "addr": 0x100, "len": 2, "size": 5, "burst": 1},
                {"id": 2, "addr": 0x200, "len": 0, "size": 5, "burst": 1},
                {"id": 3, "addr": 0x300, "len": 1, "size": 5, "burst": 1}]
    cycles = []

    async def source(ctx):
        for command in commands:
            ctx.set(dut.command.payload, command)
            ctx.set(dut.command.valid, 1)
            await ctx.tick().until(dut.command.ready)
        ctx.set(dut.command.valid, 0)

    async def sink(ctx):
        ctx.set(dut.beats.ready, 1)
        cycle = 0
        while len(cycles) < 6:
            _, _, valid = await ctx.tick().sample(dut.beats.valid)
            if valid:
                cycles.append(cycle)
            cycle += 1

    simulate(dut, source, sink, cycles=100)
    assert cycles == list(range(cycles[0], cycles[0] + 6))
