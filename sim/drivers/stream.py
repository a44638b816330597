"""Valid/ready stream drivers for Amaranth ``lib.stream`` ports flattened into Verilog
(``<prefix>__valid``, ``<prefix>__ready``, ``<prefix>__payload``).

Drivers are clocked participants of a :class:`CycleLoop`: right after each rising edge
every participant drives its outputs (``drive``), then in the read-only phase of the same
cycle every participant samples the settled signals (``sample``); a transfer happens at
the next edge exactly when ``valid`` and ``ready`` are both high then. One coroutine for
all ports keeps the per-cycle Python cost low.

Both ends take a ``pause`` probability for random back-pressure (a source withholding
``valid``, a sink withholding ``ready``), drawn from a seeded generator so that a failing
run can be replayed; ``hold`` stops an end entirely.
"""

from collections import deque
import random

from cocotb.triggers import Event, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time


__all__ = ["ClockCycles", "CycleLoop", "StreamSource", "StreamSink", "CachedWrite"]


class ClockCycles:
    """Cycle numbers from simulation time, identical for every coroutine that asks."""

    def __init__(self, period_ns):
        self.period_ns = period_ns

    def now(self):
        return int(get_sim_time(unit="ns") // self.period_ns)


class CachedWrite:
    """Writes a signal only when its value changes: each write is a simulator call."""

    def __init__(self, handle, value=0):
        self.handle = handle
        self.value = value
        handle.value = value

    def set(self, value):
        if value != self.value:
            self.value = value
            self.handle.value = value


class CycleLoop:
    def __init__(self, clock, cycles):
        self.clock = clock
        self.cycles = cycles
        self.participants = []

    def add(self, participant):
        self.participants.append(participant)
        return participant

    async def run(self):
        participants = self.participants
        while True:
            for participant in participants:
                participant.drive()
            await ReadOnly()
            now = self.cycles.now()
            for participant in participants:
                participant.sample(now)
            await RisingEdge(self.clock)


class _StreamEnd:
    def __init__(self, dut, prefix, *, codec=None, pause=0.0, seed=0):
        if not 0.0 <= pause < 1.0:
            raise ValueError(f"pause probability must be in [0, 1), not {pause}")
        self.codec = codec
        self.pause = pause
        self.random = random.Random(seed)
        self.transfer_cycles = []
        self.hold = False
        self._valid = getattr(dut, f"{prefix}__valid")
        self._ready = getattr(dut, f"{prefix}__ready")
        self._payload = getattr(dut, f"{prefix}__payload")

    def _paused(self):
        return self.hold or (self.pause > 0.0 and self.random.random() < self.pause)


class StreamSource(_StreamEnd):
    """Drives queued items (dicts for struct payloads, ints otherwise) in order, recording
    the cycle of each transfer."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.valid = CachedWrite(self._valid)
        self.payload = CachedWrite(self._payload)
        self.queue = deque()
        self.sent = 0
        self._offering = False
        self._drained = Event()

    def _word(self, item):
        return self.codec.pack(item) if self.codec else int(item)

    def drive(self):
        self._offering = bool(self.queue) and not self._paused()
        self.valid.set(int(self._offering))
        if self._offering:
            self.payload.set(self.queue[0])

    def sample(self, now):
        if self._offering and int(self._ready.value):
            self.queue.popleft()
            self.transfer_cycles.append(now)
            self.sent += 1
            if not self.queue:
                self._drained.set()

    async def send(self, items):
        """Queue ``items`` and return once all of them have been transferred."""
        words = [self._word(item) for item in items]
        if not words:
            return
        self._drained.clear()
        self.queue.extend(words)
        await self._drained.wait()


class StreamSink(_StreamEnd):
    """Accepts transfers, keeping the payloads and the cycle each was taken in."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ready = CachedWrite(self._ready)
        self.items = []
        self._accepting = False

    def drive(self):
        self._accepting = not self._paused()
        self.ready.set(int(self._accepting))

    def sample(self, now):
        if self._accepting and int(self._valid.value):
            word = self._payload.value.to_unsigned()
            self.items.append(self.codec.unpack(word) if self.codec else word)
            self.transfer_cycles.append(now)
