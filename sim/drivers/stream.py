"""Valid/ready stream drivers for Amaranth ``lib.stream`` ports flattened into Verilog
(``<prefix>__valid``, ``<prefix>__ready``, ``<prefix>__payload``): a source, a sink and a
passive monitor.

Drivers are clocked :class:`Participant` s of a :class:`CycleLoop`: right after each
rising edge every participant drives its outputs (``drive``), then in the read-only phase
of the same cycle every participant samples the settled signals (``sample``); a transfer
happens at the next edge exactly when ``valid`` and ``ready`` are both high then. One
coroutine for all ports keeps the per-cycle Python cost low.

Idle cycles of a source and back-pressure of a sink come from a
:class:`~matndp.sim.drivers.pause.PausePattern`, drawn from a seeded generator so that a
failing run can be replayed; ``hold`` stops an end (a source still completes the offer it
has up). A source never withdraws an offer: once ``valid`` is up, it and the payload stay until the transfer, as the stream
rules require; a pause only delays the start of the next offer.

Reset (the loop's ``reset`` signal, synchronous, active high): no transfer is counted at
an edge where reset is high. From the cycle after reset is seen until the cycle after it
is released, sources drive ``valid`` low and sinks ``ready`` low. A source keeps the items
it has not transferred and offers them again after the reset, the interrupted offer
first; a sink and a monitor keep what they received. Every end records the cycle each
reset began in ``reset_cycles``.
"""

from collections import deque

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles as Edges, Event, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from matndp.sim.drivers.pause import NoPause, pause_iterator


__all__ = ["ClockCycles", "CachedWrite", "Participant", "CycleLoop", "stream_signal",
           "StreamSource", "StreamSink", "StreamMonitor", "SignalTrace"]


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


class Participant:
    """One clocked member of a :class:`CycleLoop`.

    ``drive()`` runs right after each rising edge; ``sample(now)`` runs in the read-only
    phase of a cycle in which reset is low, ``reset(now)`` in one in which it is high.
    The loop sets ``in_reset`` after the first ``reset`` call and clears it before the
    first ``sample`` after the reset, so ``drive`` sees it during the cycles to keep idle
    and ``reset`` sees it unset when a reset begins.
    """

    in_reset = False

    def drive(self):
        pass

    def sample(self, now):
        pass

    def reset(self, now):
        pass


def _asserted(handle):
    try:
        return bool(int(handle.value))
    except ValueError:
        # Undriven (X/Z) before the testbench has driven it: treat as in reset.
        return True


class CycleLoop:
    def __init__(self, clock, cycles, *, reset=None):
        self.clock = clock
        self.cycles = cycles
        self.reset = reset
        self.participants = []

    def add(self, participant):
        if not isinstance(participant, Participant):
            raise TypeError(f"a cycle loop takes Participant objects, not {participant!r}")
        self.participants.append(participant)
        return participant

    async def start(self, *, reset_cycles=3):
        """Start the clock (of the loop's period), hold ``reset`` for ``reset_cycles``
        cycles, release it and run the loop from the next edge on."""
        cocotb.start_soon(Clock(self.clock, self.cycles.period_ns, unit="ns").start())
        self.reset.value = 1
        await Edges(self.clock, reset_cycles)
        self.reset.value = 0
        await RisingEdge(self.clock)
        cocotb.start_soon(self.run())

    async def run(self):
        participants = self.participants
        reset = self.reset
        in_reset = False
        while True:
            for participant in participants:
                participant.drive()
            await ReadOnly()
            now = self.cycles.now()
            if reset is not None and _asserted(reset):
                for participant in participants:
                    participant.reset(now)
                    participant.in_reset = True
                in_reset = True
            else:
                if in_reset:
                    for participant in participants:
                        participant.in_reset = False
                    in_reset = False
                for participant in participants:
                    participant.sample(now)
            await RisingEdge(self.clock)


def stream_signal(dut, prefix, name):
    """``<prefix>__<name>`` of ``dut``, with an error that names it when it is missing."""
    try:
        return getattr(dut, f"{prefix}__{name}")
    except AttributeError:
        raise AttributeError(f"the design has no stream signal {prefix}__{name}") from None


class _StreamPort(Participant):
    """The signals of one stream and the record of its transfers: ``items`` (decoded
    payloads) and ``transfer_cycles``, in transfer order."""

    def __init__(self, dut, prefix, *, codec=None):
        self.prefix = prefix
        self.codec = codec
        self.items = []
        self.transfer_cycles = []
        self.reset_cycles = []
        self._valid = stream_signal(dut, prefix, "valid")
        self._ready = stream_signal(dut, prefix, "ready")
        self._payload = stream_signal(dut, prefix, "payload")

    def reset(self, now):
        if not self.in_reset:
            self.reset_cycles.append(now)

    def _record(self, now, word=None):
        if word is None:
            word = self._payload.value.to_unsigned()
        self.items.append(self.codec.unpack(word) if self.codec else word)
        self.transfer_cycles.append(now)


class _PausingEnd(_StreamPort):
    def __init__(self, dut, prefix, *, codec=None, pause=NoPause(), seed=0):
        super().__init__(dut, prefix, codec=codec)
        self.hold = False
        self.set_pause(pause, seed)

    def set_pause(self, pause, seed=0):
        """Follow ``pause`` (a :class:`~matndp.sim.drivers.pause.PausePattern`) from the
        next cycle on, drawing from a generator seeded with ``seed``."""
        self.pause = pause
        self._pauses = pause_iterator(pause, seed)


class StreamSource(_PausingEnd):
    """Drives queued items (dicts for struct payloads, ints otherwise) in order.

    gate: optional ``gate(item) -> bool``, asked before an item's offer starts; while it
    answers ``False`` the source waits (the cycles are counted in ``gated_cycles``). A
    testbench uses it for conditions of the traffic itself, e.g. a tag still in use.
    """

    def __init__(self, dut, prefix, *, codec=None, pause=NoPause(), seed=0, gate=None):
        super().__init__(dut, prefix, codec=codec, pause=pause, seed=seed)
        self.gate = gate
        self.gated_cycles = 0
        self.refused_cycles = 0         # cycles with an offer up and not taken
        self.valid = CachedWrite(self._valid)
        self.payload = CachedWrite(self._payload)
        self.queue = deque()            # (word, item), not yet transferred
        self._offering = False
        self._drained = Event()
        self._drained.set()

    @property
    def sent(self):
        return len(self.items)

    @property
    def idle(self):
        return not self.queue

    def _word(self, item):
        return self.codec.pack(item) if self.codec else int(item)

    def may_offer(self):
        """Whether the head item's offer may start this cycle, pauses and ``hold`` aside
        (a subclass's own condition, e.g. a gap after the last transfer)."""
        return True

    def drive(self):
        paused = next(self._pauses)
        if self.in_reset:
            self._offering = False
        elif not self._offering and self.queue and not paused and not self.hold \
                and self.may_offer():
            word, item = self.queue[0]
            if self.gate is None or self.gate(item):
                self._offering = True
                self.payload.set(word)
            else:
                self.gated_cycles += 1
        self.valid.set(int(self._offering))

    def sample(self, now):
        if self._offering:
            if int(self._ready.value):
                _, item = self.queue.popleft()
                self.items.append(item)
                self.transfer_cycles.append(now)
                self._offering = False
                if not self.queue:
                    self._drained.set()
            else:
                self.refused_cycles += 1

    def reset(self, now):
        super().reset(now)
        self._offering = False

    def send_nowait(self, items):
        """Queue ``items`` (checked and packed now) without waiting for them."""
        entries = [(self._word(item), item) for item in items]
        if entries:
            self._drained.clear()
            self.queue.extend(entries)

    async def wait(self):
        """Return once every queued item has been transferred."""
        await self._drained.wait()

    async def send(self, items):
        """Queue ``items`` and return once all of them have been transferred."""
        self.send_nowait(items)
        await self.wait()


class StreamSink(_PausingEnd):
    """Accepts transfers, keeping the payloads and the cycle each was taken in."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ready = CachedWrite(self._ready)
        self._accepting = False

    def drive(self):
        paused = next(self._pauses)
        self._accepting = not (paused or self.hold or self.in_reset)
        self.ready.set(int(self._accepting))

    def sample(self, now):
        if self._accepting and int(self._valid.value):
            self._record(now)


class StreamMonitor(_StreamPort):
    """Watches a stream without driving it, recording every transfer.

    It also checks the stream rules on the transmitter's side: once ``valid`` is up it
    stays up, with the payload unchanged, until the transfer. Each violation is recorded
    in ``violations`` as ``(cycle, description)``; a reset forgives a withdrawn offer.

    record: keep the transfers (``items``, ``transfer_cycles``). Without, the monitor only
    checks the rules and reads the payload only while an offer waits, which costs little
    beside drivers that keep their own record.
    """

    def __init__(self, dut, prefix, *, codec=None, record=True):
        super().__init__(dut, prefix, codec=codec)
        self.record = record
        self.violations = []
        self._waiting = None            # the payload offered and not taken last cycle

    def sample(self, now):
        waiting = self._waiting
        if not int(self._valid.value):
            if waiting is not None:
                self.violations.append((now, "valid withdrawn before the transfer"))
            self._waiting = None
            return
        taken = int(self._ready.value)
        word = None
        if waiting is not None or not taken or self.record:
            word = self._payload.value.to_unsigned()
            if waiting is not None and word != waiting:
                self.violations.append((now, "payload changed under valid before the transfer"))
        if taken:
            if self.record:
                self._record(now, word)
            self._waiting = None
        else:
            self._waiting = word

    def reset(self, now):
        super().reset(now)
        self._waiting = None


class SignalTrace(Participant):
    """The value of each of ``signals`` (``{name: handle}``) in every cycle of the loop,
    reset cycles included: ``trace[name][k]`` is the value in the loop's ``k``-th cycle,
    the cycle in which every participant's ``k``-th ``drive`` took effect."""

    def __init__(self, signals):
        self.signals = dict(signals)
        self.trace = {name: [] for name in self.signals}
        self.cycles = []

    def sample(self, now):
        self.cycles.append(now)
        for name, handle in self.signals.items():
            self.trace[name].append(int(handle.value))

    reset = sample
