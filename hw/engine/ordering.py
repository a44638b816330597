"""The order of an ordered entry's scratchpad atomics: µthread by µthread in trigger order
(sequence number), each µthread's in program order, whatever the timing.

Why a station and not a check at dispatch: a reduction's µthreads reach their atomics in
an order the memory timing decides. Were each to wait at dispatch until its turn came, the
turn would pass from one µthread to the next only as fast as one instruction can follow
another through the issue pipeline, and a reduction would run at that latency per sector,
not at the issue rate. Here the sub-cores hand ordered atomics over as soon as they reach
them (the µthread goes on, ``posted``), each µthread's waiting in its own small queue, and
the station passes them on in order, one per cycle, as soon as the turn is theirs.

Protocol
--------
``i``: scratchpad ops from the sub-cores. An op with ``ordered`` clear goes straight on to
``o``. An op with ``ordered`` set is taken into its µthread's queue (``ordered_atomics``
deep) while the queue has room; ``i.ready`` is low for it otherwise (the sub-core replays
the instruction). The queue heads go on to ``o`` in order: the head of µthread ``t`` may go
once ``seq`` (low :func:`~.layouts.order_bits` bits) equals its entry's ``turn``; an op with
``release`` set hands the turn on (``turn`` + 1) as it leaves. The heads of an entry that
is ``stopped`` go regardless of the turn, so an entry stopped by an error never holds the
others' atomics.

``release``: per source, per entry, pulses handing the turn on directly (an ordered µthread
that ends without an atomic while it holds the turn and has nothing queued, see
``holding``). ``arm``: per entry, a pulse that restarts its order at ``seq`` 0.

``holding``: per µthread, ordered ops queued or offered on ``o``, not yet taken.

``o`` offers one op per cycle. When a queue head and a straight op both wait, they take
turns. An offered op stays offered, unchanged, until taken.

Timing: an ordered op taken in cycle t can leave from cycle t + 2 (the queue is a memory
with a registered read); the next µthread's ops can leave in the cycle after the releasing
op left, so an entry's ordered atomics pass at one per cycle.

Why nothing waits forever: an op is queued only for a µthread that is alive, and a
µthread ends only with the completion of its last ordered access (or, holding the turn
and with nothing queued, directly), so the µthreads with queued ops of one entry hold
consecutive sequence numbers from the turn on. The one whose turn it is does not depend on
the later ones, and its queue drains; nor does a full queue block another µthread's
ops: the op is refused at once and the sub-core replays it.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..config import NDPConfig
from ..onehot import first_one, one_hot_index
from .layouts import order_bits, scratchpad_op_layout


__all__ = ["AtomicOrder"]


class AtomicOrder(wiring.Component):
    """The ordering station of an engine configured by ``config``; ``release_sources``
    direct release inputs (one per sub-core)."""

    def __new__(cls, config, *, release_sources):
        # Checked before the object exists, so a refused argument leaves no component
        # behind to be reported as never elaborated.
        if not isinstance(config, NDPConfig) or config.engine is None:
            raise TypeError(f"config must be an NDPConfig with an engine, not {config!r}")
        if not isinstance(release_sources, int) or isinstance(release_sources, bool) or \
                release_sources < 1:
            raise ValueError(f"release_sources must be a positive integer, not {release_sources!r}")
        return super().__new__(cls)

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

        # Taking ops in.
        op = self.i.payload
        straight_ready = Signal()
        # A µthread's other scratchpad accesses wait behind its queued atomics (refused,
        # so the sub-core replays them), so that it sees its own updates.
        straight_valid = self.i.valid & ~op.ordered & ~self.holding.bit_select(op.thread, 1)
        room = count[op.thread] != depth
        deposit = Signal()
        m.d.comb += [
            self.i.ready.eq(Mux(op.ordered, room, straight_ready & straight_valid)),
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
        m.d.comb += pick.eq((last_pick + 1 + one_hot_index(first_one(rotation[:threads])))
                            [:thread_bits])
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
        m.d.comb += use_queued.eq(Mux(held, held_queued,
                                      queued_valid & ~(straight_valid & prefer_straight)))
        m.d.comb += [
            self.o.valid.eq(Mux(use_queued, queued_valid, straight_valid)),
            self.o.payload.eq(Mux(use_queued, read.data, op)),
            queued_taken.eq(use_queued & self.o.ready),
            straight_ready.eq(~use_queued & self.o.ready),
        ]
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += [held.eq(0), prefer_straight.eq(use_queued)]
        with m.Elif(self.o.valid):
            m.d.sync += [held.eq(1), held_queued.eq(use_queued)]
        with m.Else():
            m.d.sync += held.eq(0)
        return m
