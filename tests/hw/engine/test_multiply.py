"""The scalar multiply / divide-by-constant unit against Python integer arithmetic."""

import random

import pytest
from amaranth.sim import Simulator

from matndp.hw.config import NDPConfig
from matndp.hw.engine.isa import DIVISOR_FIELDS, DIVISOR_LAYOUT, Opcode
from matndp.hw.engine.multiply import Multiply


CONFIG = NDPConfig()


def descriptor(divisor, dividend_limit=1 << 31):
    """A multiplier and shift for ``divisor``, searched here from the definition (the
    smallest shift whose rounded-up reciprocal is exact for every dividend below the
    limit, checked at the two ends of every quotient step it could get wrong)."""
    for shift in range(0, 64):
        multiplier = -(-(1 << shift) // divisor)
        if multiplier >= 1 << 32:
            break
        error = multiplier * divisor - (1 << shift)
        # n * m / 2^s = n / d + n * e / (d * 2^s): the floor is n // d whenever
        # n * e < 2^s, so the bound at the largest dividend decides.
        if (dividend_limit - 1) * error < (1 << shift):
            return (multiplier | shift << DIVISOR_FIELDS["shift"][0]
                    | divisor << DIVISOR_FIELDS["divisor"][0])
    raise ValueError(f"no descriptor for {divisor}")


def run(requests, *, seed, pressure):
    dut = Multiply(CONFIG)
    results = []

    async def source(ctx):
        rng = random.Random(seed)
        for slot, opcode, a, b in requests:
            while pressure and rng.random() < 0.3:
                await ctx.tick()
            ctx.set(dut.request.payload.slot, slot)
            ctx.set(dut.request.payload.opcode, opcode)
            ctx.set(dut.request.payload.a, a)
            ctx.set(dut.request.payload.b, b)
            ctx.set(dut.request.valid, 1)
            await ctx.tick().until(dut.request.ready)
            ctx.set(dut.request.valid, 0)

    async def sink(ctx):
        rng = random.Random(seed + 1)
        while len(results) < len(requests):
            ready = not (pressure and rng.random() < 0.3)
            ctx.set(dut.result.ready, ready)
            # Sampled just before the edge: the transfer happens when valid and ready are both high.
            _, _, valid, slot, value = await ctx.tick().sample(
                dut.result.valid, dut.result.payload.slot, dut.result.payload.value)
            if ready and valid:
                results.append((slot, value))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(source)
    sim.add_testbench(sink)
    sim.run_until(1e-8 * (20 * len(requests) + 100))
    return results


def expected(opcode, a, b):
    if opcode == Opcode.MUL:
        return (a & 0xFFFF_FFFF) * (b & 0xFFFF_FFFF)
    divisor = b >> 40
    n = a & 0xFFFF_FFFF
    return n // divisor if opcode == Opcode.DIVC else n % divisor


@pytest.mark.parametrize("pressure", [False, True])
def test_products_quotients_and_remainders(pressure):
    rng = random.Random(5)
    requests = []
    for index in range(300):
        opcode = rng.choice([Opcode.MUL, Opcode.DIVC, Opcode.REMC])
        if opcode == Opcode.MUL:
            a, b = rng.getrandbits(64), rng.getrandbits(64)
        else:
            d = rng.choice([1, 2, 3, 7, 49, 196, 3136, 12544, rng.randrange(1, 1 << 24)])
            a, b = rng.randrange(0, 1 << 31) | rng.getrandbits(32) << 32, descriptor(d)
        requests.append((index % 16, opcode, a, b))
    results = run(requests, seed=3, pressure=pressure)
    assert [slot for slot, _ in results] == [slot for slot, *_ in requests]
    for (slot, opcode, a, b), (_, value) in zip(requests, results):
        assert value == expected(opcode, a, b), (opcode, hex(a), hex(b))
