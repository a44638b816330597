"""Valid/ready stream drivers for Amaranth ``lib.stream`` ports flattened into Verilog
(``<prefix>__valid``, ``<prefix>__ready``, ``<prefix>__payload``).

Each end decides what to drive right after a rising edge, then samples the settled
handshake in the read-only phase of the same cycle: a transfer happens at the next edge
exactly when both ``valid`` and ``ready`` are high then. Both ends take a ``pause``
probability for random back-pressure (a source withholding ``valid``, a sink withholding
``ready``), drawn from a seeded generator so that a failing run can be replayed.
"""

import random

from cocotb.triggers import ReadOnly, RisingEdge
from cocotb.utils import get_sim_time


__all__ = ["ClockCycles", "StreamSource", "StreamSink"]


class ClockCycles:
    """Cycle numbers from simulation time, identical for every coroutine that asks."""

    def __init__(self, period_ns):
        self.period_ns = period_ns

    def now(self):
        return int(get_sim_time(unit="ns") // self.period_ns)


class _StreamEnd:
    def __init__(self, dut, prefix, clock, cycles, *, codec=None, pause=0.0, seed=0):
        if not 0.0 <= pause < 1.0:
            raise ValueError(f"pause probability must be in [0, 1), not {pause}")
        self.valid = getattr(dut, f"{prefix}__valid")
        self.ready = getattr(dut, f"{prefix}__ready")
        self.payload = getattr(dut, f"{prefix}__payload")
        self.clock = clock
        self.cycles = cycles
        self.codec = codec
        self.pause = pause
        self.random = random.Random(seed)
        self.transfer_cycles = []
        self.hold = False           # set to stop the end entirely (a stalled consumer)

    def _paused(self):
        return self.hold or (self.pause > 0.0 and self.random.random() < self.pause)


class StreamSource(_StreamEnd):
    """Drives items (dicts for struct payloads, ints otherwise) onto the stream in order,
    recording the cycle of each transfer. Call from a clock-aligned point (after a rising
    edge)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.valid.value = 0
        self.sent = 0

    def _word(self, item):
        return self.codec.pack(item) if self.codec else int(item)

    async def send(self, items):
        for item in items:
            word = self._word(item)
            while True:
                offering = not self._paused()
                self.valid.value = int(offering)
                self.payload.value = word
                await ReadOnly()
                transfer = offering and bool(int(self.ready.value))
                cycle = self.cycles.now()
                await RisingEdge(self.clock)
                if transfer:
                    self.transfer_cycles.append(cycle)
                    self.sent += 1
                    break
        self.valid.value = 0


class StreamSink(_StreamEnd):
    """Accepts transfers until cancelled (start with ``cocotb.start_soon(sink.run())``),
    keeping the payloads and the cycle each was taken in."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.items = []
        self.ready.value = 0

    def _item(self, word):
        return self.codec.unpack(word) if self.codec else word

    async def run(self):
        while True:
            accepting = not self._paused()
            self.ready.value = int(accepting)
            await ReadOnly()
            if accepting and int(self.valid.value):
                self.items.append(self._item(self.payload.value.to_unsigned()))
                self.transfer_cycles.append(self.cycles.now())
            await RisingEdge(self.clock)
