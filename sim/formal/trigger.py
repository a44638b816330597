"""A formal harness around the trigger: its pass-through path is exact.

All of the trigger's inputs are the harness's ports, so the solver drives them freely.
Shadow state written from the handshakes alone states the properties:

- no request or response is lost, duplicated or invented; at most one of each is inside;
- what leaves is exactly what entered (payload unchanged);
- an empty stage always accepts (one transfer per cycle sustained);
- a held request or response is offered unless the trigger reports a stall;
- outputs obey the stream rules: an offered transfer stays offered, unchanged, until taken.
"""

from amaranth.hdl import Assert, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import connect, flipped

from matndp.hw.trigger.trigger import Trigger


__all__ = ["TriggerHarness"]


class TriggerHarness(wiring.Component):
    def __init__(self, config, *, break_payload=False):
        self.config = config
        self.break_payload = break_payload      # a deliberately wrong property, to show proofs can fail
        self.trigger = Trigger(config)
        super().__init__(self.trigger.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.trigger = trigger = self.trigger
        connect(m, flipped(self.gpu), trigger.gpu)
        connect(m, trigger.mem, flipped(self.mem))
        connect(m, trigger.events, flipped(self.events))
        m.d.comb += [
            trigger.table.eq(self.table),
            self.hit_pulse.eq(trigger.hit_pulse),
            self.stall.eq(trigger.stall),
            self.id_reuse.eq(trigger.id_reuse),
        ]
        self._pass_through(m, self.gpu.req, self.mem.req, trigger.stall, "request")
        self._pass_through(m, self.mem.resp, self.gpu.resp, trigger.stall, "response")
        self._stream_rules(m, self.events, "event")
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
        expected = entered if not self.break_payload else source.payload
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
