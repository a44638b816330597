"""Valid/ready stream ends for Amaranth's simulator, run cycle by cycle from one testbench.

Each cycle every participant first drives its inputs to the design (``drive``), then, with
the design settled, samples what it needs (``sample``); a transfer happens at the coming
clock edge exactly when ``valid`` and ``ready`` are both high in that sample. One
coroutine for every port keeps the order of events within a cycle explicit.

Sources keep the stream rules themselves: once offered, a payload stays offered and
unchanged until taken. Pauses (a source withholding ``valid`` before an item, a sink
withholding ``ready``) are drawn from seeded generators, so a failure replays. A
:class:`Monitor` checks a design's output against the same rules, passively.

Payloads are handled as integers (``Value.cast`` of the payload);
:class:`~matndp.sim.drivers.packing.StructCodec` turns them into and out of dicts.
"""

import random

from amaranth.hdl import Value
from amaranth.sim import Simulator


__all__ = ["Pause", "Source", "Sink", "Monitor", "run"]


class Pause:
    """Seeded random pauses: each call says whether to hold this cycle."""

    def __init__(self, probability=0.0, seed=0):
        if not 0.0 <= probability < 1.0:
            raise ValueError(f"a pause probability must be in [0, 1), not {probability}")
        self.probability = probability
        self.random = random.Random(seed)
        self.hold = False

    def __call__(self):
        return self.hold or (self.probability > 0.0 and self.random.random() < self.probability)


class Source:
    """Offers items on ``stream`` in order. ``items`` is a list of ints, or a callable that
    returns the next item or None when it has none to offer this cycle (asked only while
    nothing is offered). ``withdraw`` breaks the stream rules on purpose, to show what a
    design does then: an offered item is withdrawn for a cycle with that probability."""

    def __init__(self, stream, items, *, pause=None, withdraw=None):
        self.stream = stream
        self.payload = Value.cast(stream.payload)
        self._next = items if callable(items) else iter(items).__next__
        self._exhausted = False
        self.pause = pause or Pause()
        self.withdraw = withdraw or Pause()
        self._withdrawn = False
        self.offered = None
        self.sent = []
        self.offer_cycles = []         # when each item was first offered
        self.cycles = []               # when each item was taken
        self.transfer = False          # whether the last sampled cycle transferred

    @property
    def idle(self):
        return self.offered is None and self._exhausted

    def _take_next(self):
        if self._exhausted:
            return None
        try:
            return self._next()
        except StopIteration:
            self._exhausted = True
            return None

    def drive(self, ctx, cycle):
        if self.offered is None and not self.pause():
            self.offered = self._take_next()
            if self.offered is not None:
                self.offer_cycles.append(cycle)
        self._withdrawn = self.offered is not None and self.withdraw()
        ctx.set(self.stream.valid, self.offered is not None and not self._withdrawn)
        if self.offered is not None:
            ctx.set(self.payload, self.offered)

    def sample(self, ctx, cycle):
        self.transfer = self.offered is not None and not self._withdrawn and \
            bool(ctx.get(self.stream.ready))
        if self.transfer:
            self.sent.append(self.offered)
            self.cycles.append(cycle)
            self.offered = None


class Monitor:
    """Records the transfers of a design's output ``stream`` and checks that an offered
    payload stays offered, unchanged, until it is taken (unless not ``rules``)."""

    def __init__(self, stream, name, *, rules=True):
        self.stream = stream
        self.name = name
        self.rules = rules
        self.payload = Value.cast(stream.payload)
        self.items = []
        self.cycles = []
        self.valid = self.ready = False
        self._waiting = None

    def sample(self, ctx, cycle):
        self.valid = bool(ctx.get(self.stream.valid))
        self.ready = bool(ctx.get(self.stream.ready))
        payload = ctx.get(self.payload) if self.valid else None
        if self.rules and self._waiting is not None and payload != self._waiting:
            state = "withdrawn" if payload is None else f"changed to {payload:#x}"
            raise AssertionError(f"cycle {cycle}: {self.name} offered {self._waiting:#x} "
                                 f"and it was {state} before it was taken")
        if self.valid and self.ready:
            self.items.append(payload)
            self.cycles.append(cycle)
        self._waiting = payload if self.valid and not self.ready else None

    @property
    def transfer(self):
        """Whether the last sampled cycle transferred."""
        return self.valid and self.ready


class Sink(Monitor):
    """Takes transfers from a design's output ``stream``, pausing at random."""

    def __init__(self, stream, name, *, pause=None, rules=True):
        super().__init__(stream, name, rules=rules)
        self.pause = pause or Pause()

    def drive(self, ctx, cycle):
        ctx.set(self.stream.ready, not self.pause())


def run(design, participants, *, until, limit, check=None):
    """Simulate ``design`` with ``participants`` (objects with ``drive`` and/or
    ``sample``), calling ``check(ctx, cycle)`` after every sample, until ``until()`` holds
    after a cycle. Returns the number of cycles; raises AssertionError past ``limit``."""
    cycles = 0

    async def testbench(ctx):
        nonlocal cycles
        while True:
            for participant in participants:
                if hasattr(participant, "drive"):
                    participant.drive(ctx, cycles)
            for participant in participants:
                if hasattr(participant, "sample"):
                    participant.sample(ctx, cycles)
            if check is not None:
                check(ctx, cycles)
            await ctx.tick()
            cycles += 1
            if until():
                return
            if cycles >= limit:
                raise AssertionError(f"not done after {limit} cycles")

    simulator = Simulator(design)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    simulator.run()
    return cycles
