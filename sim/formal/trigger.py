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
"""

from contextlib import contextmanager
from unittest import mock

from amaranth.hdl import Assert, Fragment, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import connect, flipped

from matndp.hw import ndp_slice
from matndp.hw.trigger.trigger import Trigger


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
        super().__init__({
            "gpu":    members["gpu"],
            "mem":    members["mem"],
            "events": members["events"],
            "csr":    members["csr"],
        })

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
        self._pass_through(m, self.gpu.req, self.mem.req, stall, "request")
        self._pass_through(m, self.mem.resp, self.gpu.resp, stall, "response")
        self._stream_rules(m, self.events, "event")
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
        # An event takes two cycles from its queue to the events port, so a stall may see
        # no event there for two cycles; never for three.
        unexplained = Signal()
        unexplained_run = Signal(range(4))
        m.d.comb += unexplained.eq(stall & ~self.events.valid & (reads_in_memory == 0) &
                                   ~self.gpu.resp.valid & ~reused)
        m.d.sync += unexplained_run.eq(Mux(unexplained, Mux(unexplained_run == 3, 3,
                                                            unexplained_run + 1), 0))
        m.d.comb += Assert(~unexplained | (unexplained_run < 2),
                           "a stall for three cycles while no event waits, no read is in "
                           "memory and no response waits for the GPU")
        if self.witness is not None:
            event = self.events.valid & self.events.ready
            happens = {
                "stall": stall,
                "write_event": event & self.events.payload.write,
                "read_event": event & ~self.events.payload.write,
            }[self.witness]
            m.d.comb += Assert(~happens, f"witness: {self.witness}")
        return m

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
        self._stream_rules(m, sink, what)

    def _stream_rules(self, m, stream, what):
        waiting = Signal(name=f"{what}_waiting")
        offered = Signal.like(stream.payload, name=f"{what}_offered")
        m.d.sync += [waiting.eq(stream.valid & ~stream.ready), offered.eq(stream.payload)]
        m.d.comb += Assert(~waiting | (stream.valid & (stream.payload.as_value() == offered.as_value())),
                           f"an offered {what} was withdrawn or changed before it was taken")
