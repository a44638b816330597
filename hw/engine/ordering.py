"""The ordering station: an ordered entry's scratchpad atomics go on to the scratchpad
µthread by µthread in trigger order (sequence number), each µthread's in program order,
whatever the timing. Each µthread's ordered atomics wait in a small queue of their own
while the µthread goes on; the queue heads leave, one a cycle, once the entry's turn is
theirs, and an atomic marked to release hands the turn on. Why a station, its protocol,
timing and why nothing waits forever: docs/engine.md, "Ordering station".
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..onehot import first_one, one_hot_index
from .component import EngineComponent, check_positive
from .layouts import order_bits, scratchpad_op_layout


__all__ = ["AtomicOrder"]


class AtomicOrder(EngineComponent):
    """The ordering station of an engine configured by ``config``; ``release_sources``
    direct release inputs (one per sub-core)."""

    @classmethod
    def check_arguments(cls, config, *, release_sources):
        check_positive("release_sources", release_sources)

    def __init__(self, config, *, release_sources):
        self.config = config
        self.release_sources = release_sources
        entries = config.trigger.filter_entries
        threads = config.engine.sub_cores * config.engine.slots
        super().__init__({
            "i":       In(stream.Signature(scratchpad_op_layout(config))),
            "o":       Out(stream.Signature(scratchpad_op_layout(config))),
            "release": In(data.ArrayLayout(unsigned(entries), release_sources)),
            "arm":     In(entries),
            "stopped": In(entries),
            "turn":    Out(data.ArrayLayout(unsigned(order_bits(config)), entries)),
            "holding": Out(threads),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        engine = config.engine
        entries = config.trigger.filter_entries
        threads = engine.sub_cores * engine.slots
        depth = engine.ordered_atomics
        position_bits = max(1, (depth - 1).bit_length())
        op_layout = scratchpad_op_layout(config)
        thread_bits = engine.thread_bits

        m.submodules.queues = queues = Memory(shape=op_layout, depth=threads * depth, init=[])
        write = queues.write_port()
        read = queues.read_port()

        # Per µthread: queued ops and the positions of the next write and read; per queued
        # op (by µthread and position), what the order needs: entry, sequence, release.
        count = Signal(data.ArrayLayout(range(depth + 1), threads))
        write_position = Signal(data.ArrayLayout(unsigned(position_bits), threads))
        read_position = Signal(data.ArrayLayout(unsigned(position_bits), threads))
        tag_layout = data.StructLayout({
            "entry":   unsigned(config.trigger.entry_bits),
            "seq":     unsigned(order_bits(config)),
            "release": unsigned(1),
        })
        tags = Signal(data.ArrayLayout(tag_layout, threads * depth))

        def place(thread, position):
            """A queued op's index in the memory and in ``tags``."""
            return Cat(position, thread) if depth > 1 else thread
        # The station's output register: the op read from the queues, offered on ``o``
        # until taken, and its µthread.
        queued_valid = Signal()
        queued_thread = Signal(thread_bits)
        for thread in range(threads):
            m.d.comb += self.holding[thread].eq(
                (count[thread] != 0) | (queued_valid & (queued_thread == thread)))

        # Taking ops in. Whether an op would be taken is worked out from the op and the
        # station's registers, not from ``i.valid``: the sub-core's decision to dispatch
        # (or replay) then does not run through the station's choice of output.
        op = self.i.payload
        straight_ready = Signal()
        # A µthread's other scratchpad accesses wait behind its queued atomics (refused,
        # so the sub-core replays them), so that it sees its own updates.
        straight_offered = ~op.ordered & ~self.holding.bit_select(op.thread, 1)
        straight_valid = self.i.valid & straight_offered
        room = count[op.thread] != depth
        deposit = Signal()
        m.d.comb += [
            self.i.ready.eq(Mux(op.ordered, room, straight_ready & straight_offered)),
            deposit.eq(self.i.valid & op.ordered & room),
            write.addr.eq(place(op.thread, write_position[op.thread])),
            write.data.eq(op),
            write.en.eq(deposit),
        ]
        with m.If(deposit):
            m.d.sync += [
                tags[place(op.thread, write_position[op.thread])].entry.eq(op.entry),
                tags[place(op.thread, write_position[op.thread])].seq.eq(op.seq),
                tags[place(op.thread, write_position[op.thread])].release.eq(op.release),
                write_position[op.thread].eq(write_position[op.thread] + 1),
            ]

        # The queue heads whose turn it is.
        eligible = Signal(threads)
        for thread in range(threads):
            head = tags[place(Const(thread, thread_bits), read_position[thread])]
            m.d.comb += eligible[thread].eq(
                (count[thread] != 0) &
                (self.stopped.bit_select(head.entry, 1) | (head.seq == self.turn[head.entry])))

        # A new head is picked when the output register is free or being emptied; round
        # robin from the µthread picked last.
        queued_taken = Signal()
        refill = ~queued_valid | queued_taken
        last_pick = Signal(thread_bits)
        rotation = Signal(2 * threads)
        m.d.comb += rotation.eq(Cat(eligible, eligible) >> (last_pick + 1))
        pick_valid = refill & eligible.any()
        pick = Signal(thread_bits)
        ahead = last_pick + 1 + one_hot_index(first_one(rotation[:threads]))
        if threads & (threads - 1):
            # The count wraps at ``threads``, which a truncation to the µthread number's
            # bits only does when it is a power of two.
            ahead = Mux(ahead >= threads, ahead - threads, ahead)
        m.d.comb += pick.eq(ahead[:thread_bits])
        m.d.comb += [
            read.addr.eq(place(pick, read_position[pick])),
            read.en.eq(pick_valid),
        ]
        picked_tag = tags[place(pick, read_position[pick])]
        with m.If(pick_valid):
            m.d.sync += [last_pick.eq(pick), queued_thread.eq(pick),
                         read_position[pick].eq(read_position[pick] + 1)]
        with m.If(refill):
            m.d.sync += queued_valid.eq(pick_valid)

        # Counts: one in with a deposit, one out with a pick.
        for thread in range(threads):
            arrives = deposit & (op.thread == thread)
            leaves = pick_valid & (pick == thread)
            m.d.sync += count[thread].eq(count[thread] + arrives - leaves)

        # The turn: on with a released op picked (it leaves before anything picked later)
        # or a direct release; back to 0 when the entry is armed.
        for entry in range(entries):
            picked_release = pick_valid & picked_tag.release & (picked_tag.entry == entry)
            direct = sum(self.release[source][entry] for source in range(self.release_sources))
            with m.If(self.arm[entry]):
                m.d.sync += self.turn[entry].eq(0)
            with m.Else():
                m.d.sync += self.turn[entry].eq(self.turn[entry] + picked_release + direct)

        # The output: a queued op and a straight op take turns when both wait; the choice
        # holds while the offered op waits.
        prefer_straight = Signal()
        held = Signal()
        held_queued = Signal()
        use_queued = Signal()
        # The choice were a straight op offered (the only case in which ``straight_ready``
        # matters).
        queued_over_straight = Mux(held, held_queued, queued_valid & ~prefer_straight)
        m.d.comb += use_queued.eq(Mux(straight_valid, queued_over_straight,
                                      Mux(held, held_queued, queued_valid)))
        m.d.comb += [
            self.o.valid.eq(Mux(use_queued, queued_valid, straight_valid)),
            self.o.payload.eq(Mux(use_queued, read.data, op)),
            queued_taken.eq(use_queued & self.o.ready),
            straight_ready.eq(~queued_over_straight & self.o.ready),
        ]
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += [held.eq(0), prefer_straight.eq(use_queued)]
        with m.Elif(self.o.valid):
            m.d.sync += [held.eq(1), held_queued.eq(use_queued)]
        with m.Else():
            m.d.sync += held.eq(0)
        return m
