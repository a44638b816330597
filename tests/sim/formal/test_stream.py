# amaranth: UnusedElaboratable=no
# (Amaranth's linter option: a Module a failing test leaves behind is never elaborated.)
"""The stream rule as a property (sim/formal/stream.py): kept, broken, and assumed."""

import pytest
from amaranth.hdl import Assert, Assume, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from matndp.sim.formal import FormalFailure, prove
from matndp.sim.formal.stream import stream_rules


class _Counter(wiring.Component):
    """Offers 0, 1, 2, ... on ``o``; ``impatient`` moves on after a cycle whether or not
    the offer was taken."""

    def __init__(self, *, impatient, promised=1):
        self.impatient = impatient
        self.promised = promised
        super().__init__({"o": Out(stream.Signature(4))})

    def elaborate(self, platform):
        m = Module()
        with m.If(self.o.ready | self.impatient):
            m.d.sync += self.o.payload.eq(self.o.payload + 1)
        m.d.comb += self.o.valid.eq(1)
        stream_rules(m, self.o, "count", when=self.promised(self.o.payload)
                     if callable(self.promised) else self.promised)
        return m


def test_a_stream_that_keeps_its_offers_is_proven():
    prove(_Counter(impatient=False), depth=6)


def test_an_offer_changed_before_it_is_taken_fails():
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(_Counter(impatient=True), depth=3)


def test_the_rule_holds_only_the_offers_it_is_limited_to():
    """An impatient counter keeps no offer: limited to none of its offers, the rule has
    nothing to check; limited to its odd counts, it fails."""
    prove(_Counter(impatient=True, promised=0), depth=6)
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(_Counter(impatient=True, promised=lambda count: count[0]), depth=4)


class _Watcher(wiring.Component):
    """Asserts that an offer on ``i`` it did not take in the last cycle is still there."""

    def __init__(self, *, assume_rule):
        self.assume_rule = assume_rule
        super().__init__({"i": In(stream.Signature(4))})

    def elaborate(self, platform):
        m = Module()
        waited, payload = Signal(), Signal(4)
        m.d.comb += self.i.ready.eq(0)
        m.d.sync += [waited.eq(self.i.valid), payload.eq(self.i.payload)]
        m.d.comb += Assert(~waited | (self.i.valid & (self.i.payload == payload)))
        if self.assume_rule:
            stream_rules(m, self.i, "input", rule=Assume)
        return m


def test_the_rule_assumed_restricts_the_input():
    prove(_Watcher(assume_rule=True), depth=4)
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(_Watcher(assume_rule=False), depth=4)
