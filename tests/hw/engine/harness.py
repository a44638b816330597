"""Cycle-by-cycle stream ends for the engine's unit tests in Amaranth's simulator.

One testbench drives every port: each cycle every end sets its inputs (``drive``), then
every end reads the settled outputs and notes the transfers that happen at the coming
clock edge (``sample``), then the clock ticks. Each end pauses at random (a source
withholding ``valid``, a sink withholding ``ready``) from its own seeded generator, so a
failure replays exactly.
"""

import random

from ..streams import simulate


__all__ = ["Source", "DispatchSource", "Sink", "CompletionSinks", "simulate", "overrun_seen"]


def overrun_seen(dut, payloads):
    """Whether ``dut.overrun`` rises when ``payloads`` are offered on ``dut.ops`` one per
    cycle with every completion held (``ready`` low) and other inputs idle."""
    flagged = []

    async def bench(ctx):
        for payload in payloads:
            ctx.set(dut.ops.valid, 1)
            ctx.set(dut.ops.payload, payload)
            flagged.append(ctx.get(dut.overrun))
            await ctx.tick()
        ctx.set(dut.ops.valid, 0)
        for _ in range(6):
            flagged.append(ctx.get(dut.overrun))
            await ctx.tick()

    simulate(dut, bench)
    return any(flagged)


class Source:
    """Offers records from ``next_record()`` on ``port``, holding each until it is taken.
    A record is ``(payload, note)``: the payload for the port and whatever the test
    wants back with it; ``next_record()`` returns ``None`` when there is nothing to offer.
    ``accepted`` lists ``(cycle, record)``."""

    def __init__(self, port, next_record, *, pause, seed):
        self.port = port
        self.next_record = next_record
        self.pause = pause
        self.random = random.Random(seed)
        self.offer = None
        self.accepted = []

    def drive(self, ctx):
        if self.offer is None and self.random.random() >= self.pause:
            self.offer = self.next_record()
        ctx.set(self.port.valid, self.offer is not None)
        if self.offer is not None:
            ctx.set(self.port.payload, self.offer[0])

    def sample(self, ctx, cycle):
        """The record taken at the coming edge, or ``None``."""
        if self.offer is not None and ctx.get(self.port.ready):
            record, self.offer = self.offer, None
            self.accepted.append((cycle, record))
            return record
        return None


class DispatchSource(Source):
    """Offers each record for one cycle, as DISPATCH offers an instruction: one its unit
    does not take is replayed, and another µthread's, drawn at random from those waiting,
    may be offered first."""

    def __init__(self, port, records, *, pause, seed):
        self.waiting = list(records)
        super().__init__(port, self._draw, pause=pause, seed=seed)

    def _draw(self):
        return self.waiting.pop(self.random.randrange(len(self.waiting))) if self.waiting else None

    def sample(self, ctx, cycle):
        record = super().sample(ctx, cycle)
        if record is None and self.offer is not None:
            self.waiting.append(self.offer)
            self.offer = None
        return record


class Sink:
    """Takes records from ``port`` with ``ready`` withheld at random; ``taken`` lists
    ``(cycle, payload)``."""

    def __init__(self, port, *, pause, seed):
        self.port = port
        self.pause = pause
        self.random = random.Random(seed)
        self.ready = False
        self.taken = []

    def drive(self, ctx):
        self.ready = self.random.random() >= self.pause
        ctx.set(self.port.ready, self.ready)

    def sample(self, ctx, cycle):
        if self.ready and ctx.get(self.port.valid):
            payload = ctx.get(self.port.payload)
            self.taken.append((cycle, payload))
            return payload
        return None


class CompletionSinks:
    """A :class:`Sink` on each sub-core's completion stream of a shared unit."""

    def __init__(self, dut, *, pause, seed):
        self.slots = dut.config.engine.slots
        self.lanes = dut.config.lanes
        self.sinks = [Sink(port, pause=pause, seed=seed + index)
                      for index, port in enumerate(dut.completions)]

    def drive(self, ctx):
        for sink in self.sinks:
            sink.drive(ctx)

    def sample(self, ctx, cycle):
        """``(thread, value lanes, error)`` of each completion taken at the coming edge."""
        taken = []
        for sub_core, sink in enumerate(self.sinks):
            completion = sink.sample(ctx, cycle)
            if completion is not None:
                taken.append((sub_core * self.slots + completion.slot,
                              [completion.value[lane] for lane in range(self.lanes)],
                              completion.error))
        return taken
