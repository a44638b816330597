"""A formal harness around the NDP slice as it ships: its pass-through path is exact.

The harness instantiates :class:`~matndp.hw.ndp_slice.NDPSlice` itself, so the trigger is
proven exactly as the slice builds it, with the range ends the slice's register wiring
computes, behind the slice's register file. The solver drives every input freely: the GPU
and memory streams, the event consumer and the register bus, so filter entries may be
programmed and reprogrammed at any cycle, traffic in flight. Register reads are not
observed (the bus's responses are left unconnected), which lets Yosys drop the read
multiplexer and the counters, none of which can reach the pass-through path.

Shadow state written from the slice's handshakes alone states the properties:

- no request or response is lost, duplicated or invented; at most one of each is inside;
- what leaves is exactly what entered (payload unchanged), so order is kept;
- an empty stage always accepts (one transfer per cycle sustained);
- a held request or response is offered unless the trigger reports a stall, and a stall
  lasts only while an event waits (on ``events``, or for at most two cycles on its way
  there), a read is in memory or its response waits for the GPU (each holds a reserved
  read-event place); at most one added cycle otherwise;
- outputs obey the stream rules: an offered transfer stays offered, unchanged, until taken.

With the pipelined trigger (``TriggerConfig.pipelined``) a side holds several transfers
(``PIPELINED_REQUEST_PLACES`` requests, ``RESPONSE_BUFFER_PLACES`` responses), so the shadow
state counts the transfers inside and follows one of them, chosen by the solver as it
enters (the ``track_request`` / ``track_response`` inputs): it leaves after every one that
entered before it and none after, unchanged, and is offered once it has been inside for the
side's latency and every transfer ahead of it has left, unless the trigger stalls. Since
the solver may follow any transfer, this holds for all of them. A side takes a transfer
exactly while it holds fewer than its places. Memory does not answer a read in the cycle
it takes it (what the pipelined trigger requires, and any registered memory port does).
"""

from contextlib import contextmanager
from unittest import mock

from amaranth.hdl import Assert, Assume, Fragment, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, connect, flipped

from matndp.hw import ndp_slice
from matndp.hw.trigger.trigger import (PIPELINED_EVENT_DELAY, PIPELINED_REQUEST_LATENCY,
                                       PIPELINED_REQUEST_PLACES, PIPELINED_RESPONSE_LATENCY,
                                       RESPONSE_BUFFER_PLACES, Trigger)

from .stream import stream_rules


__all__ = ["SlicePassThroughHarness"]


# Conditions a witness run asserts never happen, so that the solver must show they do
# within the proof's depth: the proof is not vacuous.
WITNESSES = ("stall", "write_event", "read_event")


@contextmanager
def _trigger_built_as(trigger_class):
    """While active, the slice builds its trigger as ``trigger_class`` (with the slice's
    own arguments); yields the list of triggers built."""
    built = []

    def build(*args, **kwargs):
        built.append(trigger_class(*args, **kwargs))
        return built[-1]

    with mock.patch.object(ndp_slice, "Trigger", build):
        yield built


class SlicePassThroughHarness(wiring.Component):
    """``trigger_class`` replaces the slice's trigger (a deliberately broken one, to show
    the proof can fail); ``break_property`` states a wrong property instead; ``witness``
    (one of ``WITNESSES``) asserts that condition never happens."""

    def __init__(self, config, *, trigger_class=Trigger, break_property=False, witness=None):
        if witness is not None and witness not in WITNESSES:
            raise ValueError(f"witness must be one of {', '.join(WITNESSES)}, not {witness!r}")
        self.config = config
        self.trigger_class = trigger_class
        self.break_property = break_property
        self.witness = witness
        self.slice = ndp_slice.NDPSlice(config)
        members = self.slice.signature.members
        ports = {name: members[name] for name in ("gpu", "mem", "events", "csr")}
        self.pipelined = config.trigger.pipelined
        if self.pipelined:
            ports.update({"track_request": In(1), "track_response": In(1)})
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        with _trigger_built_as(self.trigger_class) as built:
            m.submodules.slice = Fragment.get(self.slice, platform)
        if len(built) != 1:
            raise RuntimeError(f"NDPSlice built {len(built)} triggers through "
                               f"matndp.hw.ndp_slice.Trigger, not one: the harness no longer "
                               f"sees the trigger it proves")
        self.trigger, = built
        stall = self.trigger.stall
        slice_ = self.slice
        connect(m, flipped(self.gpu), slice_.gpu)
        connect(m, slice_.mem, flipped(self.mem))
        connect(m, slice_.events, flipped(self.events))
        m.d.comb += [
            slice_.csr.addr.eq(self.csr.addr),
            slice_.csr.w_en.eq(self.csr.w_en),
            slice_.csr.w_data.eq(self.csr.w_data),
            slice_.csr.r_en.eq(self.csr.r_en),
        ]
        if self.pipelined:
            self._pipelined_pass_through(m, self.gpu.req, self.mem.req, stall, "request",
                                         self.track_request, PIPELINED_REQUEST_PLACES,
                                         PIPELINED_REQUEST_LATENCY)
            self._pipelined_pass_through(m, self.mem.resp, self.gpu.resp, stall, "response",
                                         self.track_response, RESPONSE_BUFFER_PLACES,
                                         PIPELINED_RESPONSE_LATENCY)
            memory_takes_read = self.mem.req.valid & self.mem.req.ready & ~self.mem.req.payload.write
            m.d.comb += Assume(~(memory_takes_read & self.mem.resp.valid &
                                 (self.mem.resp.payload.id == self.mem.req.payload.id)),
                               "memory answers a read in the cycle it takes it")
        else:
            self._pass_through(m, self.gpu.req, self.mem.req, stall, "request")
            self._pass_through(m, self.mem.resp, self.gpu.resp, stall, "response")
        stream_rules(m, self.events, "event")
        # Reads in memory, by id, from the memory port's handshakes: a triggering read may
        # wait for a read-event place that a read still in memory has reserved. (Memory is
        # driven freely and may answer ids never asked for; those clear nothing.)
        ids = 1 << len(self.mem.req.payload.id)
        reads_in_memory = Signal(ids)
        issued = Signal(ids)
        returned = Signal(ids)
        with m.If(self.mem.req.valid & self.mem.req.ready & ~self.mem.req.payload.write):
            m.d.comb += issued.eq(1 << self.mem.req.payload.id)
        with m.If(self.mem.resp.valid & self.mem.resp.ready):
            m.d.comb += returned.eq(1 << self.mem.resp.payload.id)
        m.d.sync += reads_in_memory.eq((reads_in_memory & ~returned) | issued)
        # A read id reused while outstanding breaks the contract (and is flagged as
        # ``id_reuse``): its responses may be attributed to the wrong read, so a reserved
        # place may stay reserved.
        reused = Signal()
        m.d.sync += reused.eq(reused | ((issued & reads_in_memory) != 0))
        # An event takes two cycles from its queue to the events port (pipelined, its
        # transfer's place counts from the transfer's cycle, PIPELINED_EVENT_DELAY before it
        # enters its queue), so a stall may see no event there for that long; never longer.
        unexplained_limit = 2 + (PIPELINED_EVENT_DELAY if self.pipelined else 0)
        unexplained = Signal()
        unexplained_run = Signal(range(unexplained_limit + 2))
        m.d.comb += unexplained.eq(stall & ~self.events.valid & (reads_in_memory == 0) &
                                   ~self.gpu.resp.valid & ~reused)
        m.d.sync += unexplained_run.eq(Mux(unexplained, Mux(unexplained_run == unexplained_limit + 1,
                                                            unexplained_run, unexplained_run + 1), 0))
        m.d.comb += Assert(~unexplained | (unexplained_run < unexplained_limit),
                           f"a stall for {unexplained_limit + 1} cycles while no event waits, no "
                           f"read is in memory and no response waits for the GPU")
        if self.witness is not None:
            event = self.events.valid & self.events.ready
            happens = {
                "stall": stall,
                "write_event": event & self.events.payload.write,
                "read_event": event & ~self.events.payload.write,
            }[self.witness]
            m.d.comb += Assert(~happens, f"witness: {self.witness}")
        return m

    def _pipelined_pass_through(self, m, source, sink, stall, what, track, places, latency):
        taken = source.valid & source.ready
        delivered = sink.valid & sink.ready
        inside = Signal(range(places + 1), name=f"{what}s_inside")
        m.d.sync += inside.eq(inside + taken - delivered)
        # The followed transfer: whether it is inside, the transfers ahead of it, the
        # cycles it has been inside (saturating at the latency) and what entered.
        following = Signal(name=f"{what}_following")
        followed = Signal(name=f"{what}_followed")             # one was chosen already
        ahead = Signal(range(places), name=f"{what}s_ahead")
        age = Signal(range(latency + 1), name=f"{what}_age")
        entered = Signal.like(source.payload, name=f"{what}_entered")
        start = taken & track & ~followed
        with m.If(start):
            m.d.sync += [following.eq(1), followed.eq(1), entered.eq(source.payload),
                         ahead.eq(inside - delivered), age.eq(1)]
        with m.If(following):
            m.d.sync += age.eq(Mux(age == latency, latency, age + 1))
            with m.If(delivered):
                m.d.sync += ahead.eq(ahead - 1)
                with m.If(ahead == 0):
                    m.d.sync += following.eq(0)
        leaving = following & (ahead == 0)
        expected = source.payload if self.break_property else entered
        m.d.comb += [
            Assert(~delivered | (inside != 0), f"a {what} left that never entered"),
            Assert(source.ready == (inside < places),
                   f"the {what} side did not take a transfer exactly while it holds fewer "
                   f"than {places}"),
            Assert(~(leaving & sink.valid) | (sink.payload.as_value() == expected.as_value()),
                   f"a {what} left out of order or changed on its way"),
            Assert(~(leaving & (age == latency)) | stall | sink.valid,
                   f"a {what} inside for {latency} cycles, first in line, was not offered "
                   f"without a stall"),
        ]
        stream_rules(m, sink, what)

    def _pass_through(self, m, source, sink, stall, what):
        taken = source.valid & source.ready
        delivered = sink.valid & sink.ready
        held = Signal(name=f"{what}_held")
        entered = Signal.like(source.payload, name=f"{what}_entered")
        with m.If(taken & ~delivered):
            m.d.sync += held.eq(1)
        with m.Elif(delivered & ~taken):
            m.d.sync += held.eq(0)
        with m.If(taken):
            m.d.sync += entered.eq(source.payload)
        expected = source.payload if self.break_property else entered
        m.d.comb += [
            Assert(~delivered | held, f"a {what} left that never entered"),
            Assert(~(taken & held & ~delivered), f"a second {what} was taken while one is held"),
            Assert(~sink.valid | (sink.payload.as_value() == expected.as_value()),
                   f"a {what} changed on its way"),
            Assert(held | source.ready, f"an empty {what} stage refused a transfer"),
            Assert(~held | stall | sink.valid, f"a held {what} was not offered without a stall"),
        ]
        stream_rules(m, sink, what)

