"""cocotb tests of the stream drivers (``sim/drivers/stream.py``) on both directions of
:class:`~matndp.sim.designs.MemoryPortFIFOs`: requests as struct payloads, read responses
as plain words. Parameters: those of :mod:`matndp.sim.tb.port_fixture`, and

MATNDP_SEED       seed of the traffic and of every pause pattern
"""

import itertools
import os
import random

import cocotb

from matndp.sim.drivers.pause import PAUSE_PATTERNS, pause_iterator
from matndp.sim.drivers.stream import (CachedWrite, Participant, SignalTrace, StreamMonitor,
                                       StreamSink, StreamSource)
from matndp.sim.tb.port_fixture import PortBench


SEED = int(os.environ.get("MATNDP_SEED", "1"))
PATTERNS = list(PAUSE_PATTERNS)


def _requests(bench, count, rng):
    config = bench.config
    sector = config.sector_bytes
    return [dict(addr=rng.randrange(1 << config.addr_width) & ~(sector - 1), write=rng.getrandbits(1),
                 data=rng.getrandbits(8 * sector), mask=rng.getrandbits(sector),
                 id=rng.getrandbits(config.id_width)) for _ in range(count)]


def _words(bench, count, rng):
    return [rng.getrandbits(bench.responses.layout.size) for _ in range(count)]


class _Paths:
    """A source, a sink and a monitor at each end of both directions of the design."""

    def __init__(self, bench, source_pause, sink_pause, seed):
        dut = bench.dut
        codec = bench.requests
        self.request_source = bench.add(StreamSource(dut, "gpu__req", codec=codec, pause=source_pause, seed=seed))
        self.request_sink = bench.add(StreamSink(dut, "mem__req", codec=codec, pause=sink_pause, seed=seed + 1))
        self.response_source = bench.add(StreamSource(dut, "mem__resp", pause=source_pause, seed=seed + 2))
        self.response_sink = bench.add(StreamSink(dut, "gpu__resp", pause=sink_pause, seed=seed + 3))
        self.monitors = {prefix: bench.add(StreamMonitor(dut, prefix, codec=codec if "req" in prefix else None))
                         for prefix in ("gpu__req", "mem__req", "mem__resp", "gpu__resp")}

    def ends(self):
        """(source, its monitor, sink, its monitor) per direction."""
        return [(self.request_source, self.monitors["gpu__req"], self.request_sink, self.monitors["mem__req"]),
                (self.response_source, self.monitors["mem__resp"], self.response_sink, self.monitors["gpu__resp"])]


def _check_monitor(monitor, end):
    assert not monitor.violations, f"{monitor.prefix}: stream rules broken: {monitor.violations}"
    assert monitor.items == end.items, f"{monitor.prefix}: the monitor saw other transfers than the driver"
    assert monitor.transfer_cycles == end.transfer_cycles, f"{monitor.prefix}: transfers seen in other cycles"


@cocotb.test()
@cocotb.parametrize(source=PATTERNS, sink=PATTERNS)
async def order_and_content_under_pauses(dut, source, sink):
    """Everything sent arrives once, unchanged and in order, whatever the idle cycles of
    the source and the back-pressure of the sink; each monitor sees exactly the transfers
    of the end it watches."""
    bench = PortBench(dut)
    paths = _Paths(bench, PAUSE_PATTERNS[source], PAUSE_PATTERNS[sink], SEED)
    rng = random.Random(SEED)
    requests, words = _requests(bench, 48, rng), _words(bench, 48, rng)
    await bench.start()
    paths.request_source.send_nowait(requests)
    paths.response_source.send_nowait(words)
    await bench.until(lambda: len(paths.request_sink.items) == len(requests) and
                      len(paths.response_sink.items) == len(words), 2000, "delivery of every item")
    await bench.wait(20)
    for sent, (source_end, source_monitor, sink_end, sink_monitor) in zip((requests, words), paths.ends()):
        assert source_end.items == sent and source_end.idle
        assert sink_end.items == sent, f"{sink_end.prefix}: items lost, duplicated, altered or reordered"
        _check_monitor(source_monitor, source_end)
        _check_monitor(sink_monitor, sink_end)
        # Through a FIFO an item leaves at least one cycle after it entered.
        assert all(out > into for into, out in zip(source_end.transfer_cycles, sink_end.transfer_cycles))


@cocotb.test()
@cocotb.parametrize(pattern=PATTERNS)
async def pause_patterns_reach_the_wires(dut, pattern):
    """A source offers exactly in the cycles its pattern leaves free (its path never
    pushes back here), a sink is ready exactly in those cycles: the pattern replayed
    from the same seed predicts every cycle on the wires."""
    bench = PortBench(dut)
    pause = PAUSE_PATTERNS[pattern]
    rng = random.Random(SEED)
    source = bench.add(StreamSource(dut, "gpu__req", codec=bench.requests, pause=pause, seed=SEED))
    bench.add(StreamSink(dut, "mem__req", codec=bench.requests))
    responses = bench.add(StreamSource(dut, "mem__resp", seed=SEED))
    sink = bench.add(StreamSink(dut, "gpu__resp", pause=pause, seed=SEED + 1))
    trace = bench.add(SignalTrace({"valid": dut.gpu__req__valid, "ready": dut.gpu__resp__ready}))
    requests = _requests(bench, 60, rng)
    source.send_nowait(requests)
    responses.send_nowait(_words(bench, 400, rng))
    await bench.start()
    await source.wait()
    await bench.wait(5)
    cycles = len(trace.cycles)
    source_pauses = list(itertools.islice(pause_iterator(pause, SEED), cycles))
    sink_pauses = list(itertools.islice(pause_iterator(pause, SEED + 1), cycles))
    last_offer = trace.cycles.index(source.transfer_cycles[-1])
    assert trace.trace["valid"][:last_offer + 1] == [int(not p) for p in source_pauses[:last_offer + 1]]
    assert not any(trace.trace["valid"][last_offer + 1:])
    assert trace.trace["ready"] == [int(not p) for p in sink_pauses]
    assert sink.items, "the paused sink took nothing"


@cocotb.test()
async def reset_mid_stream(dut):
    """Reset while both directions are busy: no transfer counts at an edge in reset;
    sources and sinks idle from the cycle after reset is seen to the cycle after its
    release; the design loses what it held, the sources lose nothing (the interrupted
    offer is made again), and the traffic resumes in order."""
    bench = PortBench(dut)
    paths = _Paths(bench, PAUSE_PATTERNS["random"], PAUSE_PATTERNS["random"], SEED)
    trace = bench.add(SignalTrace({"gpu__req__valid": dut.gpu__req__valid, "mem__req__ready": dut.mem__req__ready,
                                   "mem__resp__valid": dut.mem__resp__valid,
                                   "gpu__resp__ready": dut.gpu__resp__ready}))
    design_ready = bench.add(SignalTrace({"gpu__req__ready": dut.gpu__req__ready,
                                          "mem__resp__ready": dut.mem__resp__ready}))
    rng = random.Random(SEED)
    requests, words = _requests(bench, 120, rng), _words(bench, 120, rng)
    await bench.start()
    paths.request_source.send_nowait(requests)
    paths.response_source.send_nowait(words)
    await bench.wait(40)
    # Stop the sinks so that the design fills and each source waits with an offer when
    # the reset comes.
    paths.request_sink.hold = paths.response_sink.hold = True
    await bench.wait(12)
    length = 3
    first = await bench.reset(length)
    paths.request_sink.hold = paths.response_sink.hold = False
    in_reset = range(first, first + length)
    await paths.request_source.wait()
    await paths.response_source.wait()
    await bench.wait(30)

    at_reset = trace.cycles.index(first)
    for valid, ready in (("gpu__req__valid", "gpu__req__ready"), ("mem__resp__valid", "mem__resp__ready")):
        assert trace.trace[valid][at_reset] and not design_ready.trace[ready][at_reset], \
            f"{valid}: no offer was waiting when the reset came: a weak test"
    held_idle = [trace.cycles.index(cycle) for cycle in range(first + 1, first + length + 1)]
    for name, values in trace.trace.items():
        assert all(values[k] == 0 for k in held_idle), f"{name} not idle around the reset"
    for sent, (source_end, source_monitor, sink_end, sink_monitor) in zip((requests, words), paths.ends()):
        for end in (source_end, source_monitor, sink_end, sink_monitor):
            assert end.reset_cycles == [first], (end.prefix, end.reset_cycles)
            assert not set(end.transfer_cycles) & set(in_reset), f"{end.prefix}: a transfer during reset"
        _check_monitor(source_monitor, source_end)
        _check_monitor(sink_monitor, sink_end)
        assert source_end.items == sent, f"{source_end.prefix}: the source lost or repeated items"
        entered_before = [item for item, cycle in zip(source_end.items, source_end.transfer_cycles) if cycle < first]
        entered_after = [item for item, cycle in zip(source_end.items, source_end.transfer_cycles) if cycle > first]
        left_before = [item for item, cycle in zip(sink_end.items, sink_end.transfer_cycles) if cycle < first]
        left_after = [item for item, cycle in zip(sink_end.items, sink_end.transfer_cycles) if cycle > first]
        assert left_before == entered_before[:len(left_before)]
        assert len(left_before) < len(entered_before), "the design held nothing when reset: a weak test"
        assert left_after == entered_after, f"{sink_end.prefix}: traffic after the reset differs"


class _RuleBreaker(Participant):
    """A transmitter on ``gpu__req`` that fills the design, then, once an offer is refused,
    changes the payload under ``valid`` for a cycle and then withdraws ``valid``."""

    def __init__(self, dut):
        self.valid = CachedWrite(dut.gpu__req__valid)
        self.payload = CachedWrite(dut.gpu__req__payload)
        self._ready = dut.gpu__req__ready
        self.word = 1
        self.phase = "fill"
        self.refused_cycle = None

    def drive(self):
        if self.phase == "change":
            self.word += 1
        self.valid.set(int(self.phase in ("fill", "change")))
        self.payload.set(self.word)

    def sample(self, now):
        if self.phase == "fill":
            if int(self._ready.value):
                self.word += 1
            else:
                self.phase, self.refused_cycle = "change", now
        elif self.phase == "change":
            self.phase = "withdraw"
        elif self.phase == "withdraw":
            self.phase = "done"


@cocotb.test()
async def monitor_flags_broken_stream_rules(dut):
    """The monitor reports a payload changed under ``valid`` and a ``valid`` withdrawn
    before the transfer, each in the cycle it happened, and records only real transfers."""
    bench = PortBench(dut)
    breaker = bench.add(_RuleBreaker(dut))
    sink = bench.add(StreamSink(dut, "mem__req"))
    sink.hold = True
    monitor = bench.add(StreamMonitor(dut, "gpu__req"))
    await bench.start()
    await bench.until(lambda: breaker.phase == "done", 100, "the rule breaker's script")
    refused = breaker.refused_cycle
    assert monitor.violations == [(refused + 1, "payload changed under valid before the transfer"),
                                  (refused + 2, "valid withdrawn before the transfer")], monitor.violations
    assert monitor.items == list(range(1, len(monitor.items) + 1))
    assert len(monitor.items) == bench.fifo_depth
