# amaranth: UnusedElaboratable=no
# (Amaranth's linter option: a harness whose constructor refuses its arguments still exists
# and would be reported as never elaborated. Every harness these tests build is proven.)
"""Bounded proofs of the pass-through path of the NDP slice as it ships
(sim/formal/trigger.py), and proofs that fail where they must: on mutated triggers, on a
wrong property, and on witnesses that show the depth reaches stalls and events."""

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import connect, flipped

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.stream import RegisterSlice
from matndp.hw.trigger.trigger import Trigger
from matndp.sim.formal import FormalFailure, prove
from matndp.sim.formal.trigger import WITNESSES, SlicePassThroughHarness


# Small enough for the solver, large enough to fill the event queues and reuse ids. The
# register map splits addresses into two words, so 33 address bits is the least it takes.
CONFIG = NDPConfig(addr_width=33, sector_bytes=4, id_width=2, counter_width=8,
                   trigger=TriggerConfig(filter_entries=2, event_queue_depth=2), engine=None)
# The least depth at which every witness below is reached (at 10 a read event is not): the
# default suite proves the slice to it, the slow suite to DEEP.
DEPTH = 12
DEEP = 20
# The pipelined trigger in the same slice. Its proof's depth reaches a stall (at 10 it does
# not); a request crosses the request side's four stages from 5 cycles on. The mutants fail
# by PIPELINED_MUTANT_DEPTH already.
PIPELINED = NDPConfig(addr_width=33, sector_bytes=4, id_width=2, counter_width=8,
                      trigger=TriggerConfig(filter_entries=2, event_queue_depth=2,
                                            pipelined=True), engine=None)
PIPELINED_DEPTH = 12
PIPELINED_MUTANT_DEPTH = 8


@pytest.mark.parametrize("depth", [DEPTH, pytest.param(DEEP, marks=pytest.mark.slow)])
def test_pass_through_properties_hold_on_the_shipped_slice(depth, timed_proof):
    timed_proof(SlicePassThroughHarness(CONFIG), depth)


class _MutatedTrigger(wiring.Component):
    """The shipped trigger with its memory-side request path altered by ``mutate``
    (``mutate(m, inner, outer)`` joins the real trigger's ``mem.req`` to the port)."""

    mutate = None

    def __init__(self, config, **kwargs):
        self.inner = Trigger(config, **kwargs)
        super().__init__(self.inner.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self.inner
        connect(m, flipped(self.gpu), inner.gpu)
        connect(m, inner.events, flipped(self.events))
        m.d.comb += [
            inner.mem.resp.valid.eq(self.mem.resp.valid),
            inner.mem.resp.payload.eq(self.mem.resp.payload),
            self.mem.resp.ready.eq(inner.mem.resp.ready),
            inner.table.eq(self.table),
            inner.ends.eq(self.ends),
            self.hit_pulse.eq(inner.hit_pulse),
            self.produced.eq(inner.produced),
            self.stall.eq(inner.stall),
            self.id_reuse.eq(inner.id_reuse),
        ]
        type(self).mutate(m, inner.mem.req, self.mem.req)
        return m


def _drops_a_write(m, inner, outer):
    """Writes with id 3 are taken from the trigger and never reach memory."""
    lost = inner.payload.write & (inner.payload.id == 3)
    m.d.comb += [outer.valid.eq(inner.valid & ~lost), outer.payload.eq(inner.payload),
                 inner.ready.eq(outer.ready | lost)]


def _alters_data(m, inner, outer):
    """A write's data loses its top bit when its address's lowest bit is set."""
    m.d.comb += [outer.valid.eq(inner.valid), inner.ready.eq(outer.ready),
                 outer.payload.eq(inner.payload),
                 outer.payload.data[-1].eq(inner.payload.data[-1] &
                                           ~(inner.payload.write & inner.payload.addr[0]))]


def _adds_a_cycle(m, inner, outer):
    """A second register stage: everything arrives, unchanged, one cycle too late."""
    m.submodules.extra = extra = RegisterSlice(inner.payload.shape())
    m.d.comb += [extra.i.valid.eq(inner.valid), extra.i.payload.eq(inner.payload),
                 inner.ready.eq(extra.i.ready), outer.valid.eq(extra.o.valid),
                 outer.payload.eq(extra.o.payload), extra.o.ready.eq(outer.ready)]


def _sends_twice(m, inner, outer):
    """A read is offered once more after memory took it."""
    again = Signal()
    copy = Signal.like(inner.payload)
    with m.If(again):
        m.d.comb += [outer.valid.eq(1), outer.payload.eq(copy), inner.ready.eq(0)]
        with m.If(outer.ready):
            m.d.sync += again.eq(0)
    with m.Else():
        m.d.comb += [outer.valid.eq(inner.valid), outer.payload.eq(inner.payload),
                     inner.ready.eq(outer.ready)]
        with m.If(inner.valid & outer.ready & ~inner.payload.write):
            m.d.sync += [again.eq(1), copy.eq(inner.payload)]


MUTANTS = {"drops a write": _drops_a_write, "alters data": _alters_data,
           "adds a cycle": _adds_a_cycle, "sends a read twice": _sends_twice}


@pytest.mark.parametrize("name", MUTANTS)
def test_a_mutated_trigger_fails_the_proof(name):
    mutant = type("Mutant", (_MutatedTrigger,), {"mutate": staticmethod(MUTANTS[name])})
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(SlicePassThroughHarness(CONFIG, trigger_class=mutant), depth=DEPTH)


@pytest.mark.slow
def test_pass_through_properties_hold_on_the_pipelined_trigger(timed_proof):
    timed_proof(SlicePassThroughHarness(PIPELINED), PIPELINED_DEPTH)


# With the proof, in the slow suite (each some 4 s of CPU).
@pytest.mark.slow
@pytest.mark.parametrize("name", MUTANTS)
def test_a_mutated_pipelined_trigger_fails_the_proof(name):
    mutant = type("Mutant", (_MutatedTrigger,), {"mutate": staticmethod(MUTANTS[name])})
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(SlicePassThroughHarness(PIPELINED, trigger_class=mutant),
              depth=PIPELINED_MUTANT_DEPTH)


@pytest.mark.slow
def test_the_pipelined_depth_reaches_a_stall():
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(SlicePassThroughHarness(PIPELINED, witness="stall"), depth=PIPELINED_DEPTH)


@pytest.mark.slow
def test_a_wrong_property_is_caught_on_the_pipelined_trigger():
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(SlicePassThroughHarness(PIPELINED, break_property=True),
              depth=PIPELINED_MUTANT_DEPTH)


def test_a_wrong_property_is_caught():
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(SlicePassThroughHarness(CONFIG, break_property=True), depth=DEPTH)


@pytest.mark.parametrize("witness", WITNESSES)
def test_the_depth_reaches(witness):
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(SlicePassThroughHarness(CONFIG, witness=witness), depth=DEPTH)


def test_an_unknown_witness_is_refused_by_name():
    with pytest.raises(ValueError, match="witness must be one of stall, write_event, read_event"):
        SlicePassThroughHarness(CONFIG, witness="hang")
