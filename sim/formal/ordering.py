"""A formal harness around the engine's ordering station (:class:`~matndp.hw.engine.ordering.AtomicOrder`):
an ordered entry's atomics pass in trigger order, each µthread's ops in program order.

The solver drives the station as sub-cores may: in any cycle any µthread offers an op or
not, ordered or straight, releasing or not, for either entry, withdrawn when refused; the
output is back-pressured freely. The ops' operands are zero: the station never looks at
them, and its simulation tests check that they pass unchanged. What the harness fixes is what the
spawner guarantees: a µthread's ordered atomics carry the sequence number it was given
when its life began (the next of its entry's, in trigger order) until one of them hands
the turn on, which ends that life. Each op carries its µthread's running count of ops in
its address field, so that the order of leaving can be checked against the order of
entering. Lives end by a released atomic only (no direct release, arm or stop), which
is what the order depends on.

Shadow state written from the handshakes states the properties:

- an op leaves only after it entered, each µthread's ops in the order they entered
  (a straight op never overtakes its µthread's queued atomics; nothing is lost or
  duplicated in between);
- an entry's ordered atomics leave in sequence order: each carries the number of the
  entry's turn, counted from the released atomics that have left;
- an ordered atomic once offered stays offered, unchanged, until taken.
"""

from amaranth.hdl import Assert, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.layouts import order_bits, scratchpad_op_layout
from matndp.hw.engine.ordering import AtomicOrder

from .stream import stream_rules


__all__ = ["OrderingHarness", "ORDERING_WITNESSES"]


# Conditions a witness run asserts never happen, so that the solver must show they do
# within the proof's depth: an atomic of a later µthread leaving after an earlier one's
# turn ended, and one leaving while another µthread's atomics wait queued.
ORDERING_WITNESSES = ("second_turn", "passed_while_others_wait")


class OrderingHarness(wiring.Component):
    """The station of ``config`` (``station_class``: a mutated one, to show the proof can
    fail) under a free environment; ``witness`` (one of :data:`ORDERING_WITNESSES`)
    asserts that condition never happens."""

    def __init__(self, config, *, station_class=AtomicOrder, witness=None):
        if witness is not None and witness not in ORDERING_WITNESSES:
            raise ValueError(f"witness must be one of {', '.join(ORDERING_WITNESSES)}, "
                             f"not {witness!r}")
        self.config = config
        self.station = station_class(config, release_sources=1)
        self.witness = witness
        engine = config.engine
        threads = engine.sub_cores * engine.slots
        layout = scratchpad_op_layout(config)
        super().__init__({
            "offer":    In(1),
            "thread":   In(engine.thread_bits),
            "ordered":  In(1),
            "release":  In(1),
            "entry":    In(config.trigger.entry_bits),
            "o_ready":  In(1),
            "o":        Out(layout),
            "o_valid":  Out(1),
            "holding":  Out(threads),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        engine = config.engine
        entries = config.trigger.filter_entries
        threads = engine.sub_cores * engine.slots
        m.submodules.station = station = self.station
        seq_shape = order_bits(config)
        count_shape = len(station.i.payload.addr)

        # What the spawner gave each µthread's current life, and the next number per entry.
        live = Signal(threads)
        life_seq = Signal(data.ArrayLayout(seq_shape, threads))
        life_entry = Signal(data.ArrayLayout(config.trigger.entry_bits, threads))
        next_seq = Signal(data.ArrayLayout(seq_shape, entries))
        entered = Signal(data.ArrayLayout(count_shape, threads))
        left = Signal(data.ArrayLayout(count_shape, threads))
        turn = Signal(data.ArrayLayout(seq_shape, entries))

        thread = self.thread
        in_life = live.bit_select(thread, 1)
        entry = Mux(in_life, life_entry[thread], self.entry)
        seq = Mux(in_life, life_seq[thread], next_seq[self.entry])
        op = station.i.payload
        m.d.comb += [
            station.i.valid.eq(self.offer),
            op.thread.eq(thread),
            op.opcode.eq(Opcode.SAMOADD),
            op.addr.eq(entered[thread]),
            op.entry.eq(entry),
            op.ordered.eq(self.ordered),
            op.release.eq(self.ordered & self.release),
            op.posted.eq(self.ordered & ~self.release),
            op.seq.eq(seq),
            station.o.ready.eq(self.o_ready),
            self.o.eq(station.o.payload),
            self.o_valid.eq(station.o.valid),
            self.holding.eq(station.holding),
        ]
        with m.If(station.i.valid & station.i.ready):
            m.d.sync += entered[thread].eq(entered[thread] + 1)
            with m.If(self.ordered & ~in_life):
                m.d.sync += [life_seq[thread].eq(seq), life_entry[thread].eq(entry),
                             next_seq[entry].eq(next_seq[entry] + 1)]
            with m.If(self.ordered):
                m.d.sync += live.bit_select(thread, 1).eq(~self.release)

        out = station.o.payload
        leaves = station.o.valid & station.o.ready
        out_thread = out.thread
        # A straight op may leave in the cycle it enters.
        accepted = station.i.valid & station.i.ready
        entered_by_now = Mux(accepted & (thread == out_thread), entered[out_thread] + 1,
                             entered[out_thread])[:count_shape]
        with m.If(leaves):
            m.d.comb += [
                Assert(left[out_thread] != entered_by_now, "an op left that never entered"),
                Assert(out.addr == left[out_thread],
                       "a µthread's op left out of the order its ops entered"),
                Assert(~out.ordered | (out.seq == turn[out.entry]),
                       "an ordered atomic left out of its entry's sequence order"),
            ]
            m.d.sync += left[out_thread].eq(left[out_thread] + 1)
            with m.If(out.ordered & out.release):
                m.d.sync += turn[out.entry].eq(turn[out.entry] + 1)

        stream_rules(m, station.o, "ordered atomic", when=out.ordered)

        if self.witness is not None:
            others = station.holding & ~(Const(1, threads) << out_thread)[:threads]
            happens = {
                "second_turn": leaves & out.ordered & (out.seq != 0),
                "passed_while_others_wait": leaves & out.ordered & (others != 0),
            }[self.witness]
            m.d.comb += Assert(~happens, f"witness: {self.witness}")
        return m
