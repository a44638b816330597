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


def shared(build, *args, **kwargs):
    """The design ``build(*args, **kwargs)``, made once per process (arguments hashable, a
    frozen config for instance). :func:`simulate` runs every test given it on one simulator, reset
    to the design's initial state between runs: making the simulator of an engine takes
    seconds, longer than most tests' simulated cycles."""
    key = (build, args, tuple(sorted(kwargs.items())))
    if key not in _SHARED_DESIGNS:
        _SHARED_DESIGNS[key] = build(*args, **kwargs)
    return _SHARED_DESIGNS[key]


def simulate(dut, *testbenches, cycles=None):
    """Run ``testbenches`` (async functions of ctx) on ``dut`` until all have finished;
    fail when that takes more than ``cycles`` cycles (None: no limit)."""
    finished = []

    def counted(testbench):
        async def run(ctx):
            await testbench(ctx)
            finished.append(testbench)
        return run

    async def time_limit(ctx):
        for _ in range(cycles):
            if len(finished) == len(testbenches):
                return
            await ctx.tick()
        raise AssertionError(f"the testbenches did not finish within {cycles} cycles")

    jobs = [counted(testbench) for testbench in testbenches] + ([time_limit] if cycles else [])
    if any(dut is design for design in _SHARED_DESIGNS.values()):
        _ReusedSimulator.of(dut).run(jobs)
    else:
        sim = Simulator(dut)
        sim.add_clock(1e-8)
        for job in jobs:
            sim.add_testbench(job)
        sim.run()


_SHARED_DESIGNS = {}


class _ReusedSimulator:
    """One simulator of a shared design. Its testbenches are slots that run, after each
    :meth:`Simulator.reset` (which restores every signal and memory and restarts every
    testbench), whichever job the slot holds then; an empty slot ends at once. A run that
    fails leaves nothing behind that the next run's reset does not undo."""

    # The simulators kept, most recently used last: each holds its design's compiled code.
    KEPT = 4
    _kept = {}

    @classmethod
    def of(cls, dut):
        reused = cls._kept.pop(id(dut), None) or cls(dut)
        cls._kept[id(dut)] = reused
        while len(cls._kept) > cls.KEPT:
            cls._kept.pop(next(iter(cls._kept)))
        return reused

    def __init__(self, dut):
        self.dut = dut
        self.simulator = Simulator(dut)
        self.simulator.add_clock(1e-8)
        self.jobs = []
        self.slots = 0

    def run(self, jobs):
        self.jobs = list(jobs)
        self.simulator.reset()
        while self.slots < len(self.jobs):
            self.simulator.add_testbench(self._slot(self.slots))
            self.slots += 1
        self.simulator.run()

    def _slot(self, index):
        async def run(ctx):
            if index < len(self.jobs):
                await self.jobs[index](ctx)
        return run
