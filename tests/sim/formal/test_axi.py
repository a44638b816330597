# amaranth: UnusedElaboratable=no
# (Amaranth's linter option: a harness whose constructor refuses its arguments still exists
# and would be reported as never elaborated.)
"""The AXI rules as properties (sim/formal/axi.py) on small slaves written for the purpose:
one that keeps the rules is proven, ones that break a rule fail, and the rules on the
environment's side restrict what the solver may drive."""

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from matndp.hw.fpga.axi import AXI4LiteSignature, AXI4Signature
from matndp.sim.formal import FormalFailure, prove
from matndp.sim.formal.axi import axi4_lite_rules, axi4_rules


READS = AXI4Signature(addr_width=12, data_width=32, id_width=1, halves=("read",))
WRITES = AXI4Signature(addr_width=12, data_width=32, id_width=1, halves=("write",))


class _OneBeatReads(wiring.Component):
    """Takes one read burst at a time and answers it with one beat, ``RLAST`` set, a
    cycle later; ``max_beats`` is the checker's bound on the bursts it is given."""

    def __init__(self, max_beats, *, answer_early=False):
        self.max_beats, self.answer_early = max_beats, answer_early
        super().__init__({"axi": In(READS)})

    def elaborate(self, platform):
        m = Module()
        axi = self.axi
        busy = Signal()
        burst_id = Signal.like(axi.arid)
        m.d.comb += [axi.arready.eq(~busy), axi.rvalid.eq(busy | self.answer_early),
                     axi.rid.eq(burst_id), axi.rlast.eq(1)]
        with m.If(axi.arvalid & axi.arready):
            m.d.sync += [busy.eq(1), burst_id.eq(axi.arid)]
        with m.If(axi.rvalid & axi.rready):
            m.d.sync += busy.eq(0)
        axi4_rules(m, axi, READS, design="slave", max_beats=self.max_beats, max_outstanding=2,
                   name="reads")
        return m


class _Writes(wiring.Component):
    """Takes write addresses and data whenever offered and answers each burst on B once
    its address and last beat are in; ``early`` answers as soon as the last beat is in."""

    def __init__(self, *, early=False):
        self.early = early
        super().__init__({"axi": In(WRITES)})

    def elaborate(self, platform):
        m = Module()
        axi = self.axi
        addresses, data_done = Signal(3), Signal(3)
        burst_id = Signal.like(axi.awid)
        m.d.comb += [axi.awready.eq(addresses < 2), axi.wready.eq(data_done < 2),
                     axi.bid.eq(burst_id), axi.bresp.eq(0)]
        if self.early:
            m.d.comb += axi.bvalid.eq(data_done != 0)
        else:
            m.d.comb += axi.bvalid.eq((addresses != 0) & (data_done != 0))
        aw_fire = axi.awvalid & axi.awready
        b_fire = axi.bvalid & axi.bready
        with m.If(aw_fire):
            m.d.sync += burst_id.eq(axi.awid)
        m.d.sync += [addresses.eq(addresses + aw_fire - b_fire),
                     data_done.eq(data_done + (axi.wvalid & axi.wready & axi.wlast) - b_fire)]
        axi4_rules(m, axi, WRITES, design="slave", max_beats=2, max_outstanding=1, name="writes")
        return m


def test_a_slave_that_keeps_the_rules_is_proven():
    prove(_OneBeatReads(max_beats=1), depth=8)


def test_rlast_on_the_first_of_two_beats_fails():
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(_OneBeatReads(max_beats=2), depth=4)


def test_a_read_answered_before_it_is_taken_fails():
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(_OneBeatReads(max_beats=1, answer_early=True), depth=2)


def test_writes_answered_after_address_and_data_are_proven():
    # Data may run ahead of its address; the answer waits for both.
    prove(_Writes(), depth=8)


def test_a_write_answered_before_its_address_fails():
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(_Writes(early=True), depth=6)


class _Lite(wiring.Component):
    """An AXI4-Lite slave that never takes a request; ``answer`` raises RVALID anyway."""

    def __init__(self, *, answer):
        self.answer = answer
        super().__init__({"axil": In(AXI4LiteSignature(addr_width=4))})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.axil.rvalid.eq(self.answer)
        axi4_lite_rules(m, self.axil, self.axil.signature, design="slave", max_outstanding=1,
                        name="lite")
        return m


def test_an_axi4_lite_answer_without_a_request_fails():
    prove(_Lite(answer=False), depth=4)
    with pytest.raises(FormalFailure, match="assertion fails within 1 cycles"):
        prove(_Lite(answer=True), depth=1)


@pytest.mark.parametrize("arguments, error, message", [
    ({"design": "target"}, ValueError, "design must be one of slave, master, not 'target'"),
    ({"max_beats": 3}, ValueError, "max_beats must be a power of two, not 3"),
    ({"max_outstanding": 0}, ValueError, "max_outstanding must be a power of two, not 0"),
    ({"signature": AXI4LiteSignature(addr_width=4)}, TypeError,
     "signature must be an AXI4Signature"),
])
def test_the_rules_refuse_bad_arguments_by_name(arguments, error, message):
    arguments = {"design": "slave", "max_beats": 2, "max_outstanding": 2, "signature": READS,
                 **arguments}
    bus = wiring.Signature({}).create()
    with pytest.raises(error, match=message):
        axi4_rules(Module(), bus, arguments.pop("signature"), name="port", **arguments)


def test_the_lite_rules_refuse_an_axi4_signature():
    with pytest.raises(TypeError, match="signature must be an AXI4LiteSignature"):
        axi4_lite_rules(Module(), None, READS, design="slave", max_outstanding=1, name="port")
