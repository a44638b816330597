"""Amaranth-simulator helpers for the engine's unit tests: drive a stream from a list of
payloads and collect another, each with random pauses, and run a testbench to the end."""

import random

from amaranth.sim import Simulator


__all__ = ["send", "receive", "simulate"]


async def send(ctx, port, payloads, *, seed, idle=0.0):
    """Offer ``payloads`` (dicts for struct payloads) in order on stream ``port``, pausing
    with probability ``idle`` between transfers."""
    rng = random.Random(seed)
    for payload in payloads:
        while idle and rng.random() < idle:
            await ctx.tick()
        ctx.set(port.payload, payload)
        ctx.set(port.valid, 1)
        await ctx.tick().until(port.ready)
        ctx.set(port.valid, 0)


async def receive(ctx, port, count, *, seed, stall=0.0, into=None):
    """Take ``count`` transfers from stream ``port``, holding ``ready`` low with probability
    ``stall`` each cycle; returns (and appends to ``into``) the payloads in order."""
    rng = random.Random(seed)
    received = [] if into is None else into
    while len(received) < count:
        ready = not (stall and rng.random() < stall)
        ctx.set(port.ready, ready)
        _, _, valid, payload = await ctx.tick().sample(port.valid, port.payload)
        if ready and valid:
            received.append(payload)
    ctx.set(port.ready, 0)
    return received


def simulate(dut, *testbenches, cycles):
    """Run ``testbenches`` (async functions of ctx) on ``dut`` until all have finished;
    fail when that takes more than ``cycles`` cycles."""
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    finished = []
    for testbench in testbenches:
        async def run(ctx, testbench=testbench):
            await testbench(ctx)
            finished.append(testbench)
        sim.add_testbench(run)

    async def time_limit(ctx):
        for _ in range(cycles):
            if len(finished) == len(testbenches):
                return
            await ctx.tick()
        raise AssertionError(f"the testbenches did not finish within {cycles} cycles")

    sim.add_testbench(time_limit)
    sim.run()
