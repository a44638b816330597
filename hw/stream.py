"""Reusable valid/ready stream parts over :class:`amaranth.lib.stream` signatures.

Every part takes its payload's shape and has an input stream ``i`` and an output stream
``o`` (the merge: one input per source, ``i[0]`` … ``i[count - 1]``), so parts compose
with :func:`~amaranth.lib.wiring.connect`. They keep the stream rules of AXI-Stream: a
transfer happens in a cycle in which ``valid`` and ``ready`` are both high; an output,
once offered, stays offered and unchanged until it is taken; no output ``valid`` waits
for its ``ready``.

========================  ================  ==================  ==========================
part                      latency (cycles)  throughput          registered outputs
========================  ================  ==================  ==========================
:class:`RegisterSlice`    1                 1 per cycle         ``o.valid``, ``o.payload``
:class:`SkidBuffer`       1                 1 per cycle         all, ``i.ready`` included
:class:`RegisterRing`     1                 1 per cycle         none (one level of logic
                                                                after registers)
:class:`PingPongBuffer`   1                 1 per cycle         as a two-place ring
:class:`Queue`            2                 1 per cycle from    ``o.valid``, ``o.payload``,
                                            depth 3             ``i.ready``
:class:`RoundRobinMerge`  0                 1 per cycle         none (with
                                                                ``registered_choice``:
                                                                the choice)
========================  ================  ==================  ==========================
"""

from amaranth.hdl import Array, Cat, Module, Mux, Shape, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from .onehot import first_one, one_hot_index, one_hot_select


__all__ = ["RegisterSlice", "SkidBuffer", "RegisterRing", "PingPongBuffer", "Queue", "RoundRobinMerge"]


def _checked_shape(payload_shape):
    try:
        Shape.cast(payload_shape)
    except TypeError as error:
        raise TypeError(f"payload_shape must be a shape (a width, range, enum or data "
                        f"layout), not {payload_shape!r}: {error}") from None
    return payload_shape


def _checked_count(name, value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {value}")
    return value


class _Stage(wiring.Component):
    def __init__(self, payload_shape, **members):
        self.payload_shape = _checked_shape(payload_shape)
        super().__init__({
            "i": In(stream.Signature(payload_shape)),
            "o": Out(stream.Signature(payload_shape)),
            **members,
        })


class RegisterSlice(_Stage):
    """One pipeline register: what enters on ``i`` is offered on ``o`` the next cycle.

    ``i.ready`` is ``o.ready`` or an empty register, so the stage passes one transfer per
    cycle with a single register; the ready path stays combinational through it (use a
    :class:`SkidBuffer` to cut that too). The payload register loads only on a transfer.
    """

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.i.ready.eq(~self.o.valid | self.o.ready)
        with m.If(self.i.ready):
            m.d.sync += self.o.valid.eq(self.i.valid)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += self.o.payload.eq(self.i.payload)
        return m


class SkidBuffer(_Stage):
    """A pipeline register whose ``i.ready`` comes from a register too, so neither path
    crosses it.

    ``i.ready`` cannot follow ``o.ready`` in the same cycle, so a transfer may arrive in
    the cycle the output stalls: a second, skid register takes it and ``i.ready`` falls
    for as long as that register is full. One transfer per cycle while the output flows.
    """

    def elaborate(self, platform):
        m = Module()
        skid = Signal(self.payload_shape)
        skid_full = Signal()
        m.d.comb += self.i.ready.eq(~skid_full)
        with m.If(~self.o.valid | self.o.ready):
            with m.If(skid_full):
                m.d.sync += [self.o.payload.eq(skid), self.o.valid.eq(1), skid_full.eq(0)]
            with m.Else():
                m.d.sync += [self.o.payload.eq(self.i.payload), self.o.valid.eq(self.i.valid)]
        with m.Elif(self.i.valid & self.i.ready):
            m.d.sync += skid_full.eq(1)
        # Both payload registers load whether or not a transfer is offered (what they take
        # without one is never offered), so the producer's ``valid`` is in neither's enable:
        # the skid register loads while it is empty, the output register while it is
        # empty or emptying.
        with m.If(~skid_full):
            m.d.sync += skid.eq(self.i.payload)
        return m


class RegisterRing(_Stage):
    """``places`` payload registers filled and emptied in turn, whose enables come from the
    ring's own state alone: neither the producer's ``valid`` nor the consumer's ``ready``
    reaches them, so a wide payload's enables are not at the end of either side's
    handshake (in a :class:`SkidBuffer` the output register loads when ``o.ready`` is
    high).

    ``i.ready`` (a register free), ``o.valid`` (a register full) and ``o.payload`` (the
    register whose turn it is) are each one level of logic after registers. Holds
    ``places`` transfers; one transfer per cycle, one cycle from ``i`` to ``o``.

    ``select_fanout``: when given, the payload bits that one copy of the read turn selects
    at most; each group of that many bits has its own copy (marked ``keep``), so a wide
    payload's multiplexers are not all behind one net.

    ``fill_side_enables``: the load enables are registered from the fill side's state
    alone, so ``o.ready`` reaches no payload enable either (otherwise it does, through the
    next state, one cycle ahead), and ``i.ready`` is a register. The price: a register
    emptied in one cycle is filled again two cycles later at the earliest. From three
    places on that costs no throughput.
    """

    def __init__(self, payload_shape, places, *, select_fanout=None, fill_side_enables=False):
        if isinstance(places, int) and not isinstance(places, bool) and places < 2:
            raise ValueError(f"places must be at least 2, not {places}")
        self.places = _checked_count("places", places)
        self.select_fanout = None if select_fanout is None else \
            _checked_count("select_fanout", select_fanout)
        if not isinstance(fill_side_enables, bool):
            raise TypeError(f"fill_side_enables must be a bool, not {fill_side_enables!r}")
        self.fill_side_enables = fill_side_enables
        super().__init__(payload_shape)

    def elaborate(self, platform):
        m = Module()
        places = self.places
        width = Shape.cast(self.payload_shape).width
        # A register's payload means something only while it is full: no reset, which
        # keeps a wide ring off the reset's net.
        slots = [Signal(self.payload_shape, name=f"slot{index}", reset_less=True)
                 for index in range(places)]
        full = Signal(places)
        write_turn = Signal(range(places))
        read_turn = Signal(range(places))
        push = self.i.valid & self.i.ready
        pop = self.o.valid & self.o.ready
        last = places - 1
        next_write_turn = Mux(push, Mux(write_turn == last, 0, write_turn + 1), write_turn)
        next_read_turn = Mux(pop, Mux(read_turn == last, 0, read_turn + 1), read_turn)
        next_full = Cat(Mux(push & (write_turn == index), 1,
                            Mux(pop & (read_turn == index), 0, full[index]))
                        for index in range(places))
        m.d.sync += [write_turn.eq(next_write_turn), read_turn.eq(next_read_turn),
                     full.eq(next_full)]
        # A free register loads whatever is offered while it is the one to fill; the push
        # that fills it is the last load until it is emptied.
        if self.fill_side_enables:
            # From the fullness of this cycle, not the next: a register emptied now is
            # not yet free. The register filled now is not the next to fill (places > 1),
            # so pushes need no term of their own.
            next_loads = Cat((next_write_turn == index) & ~full[index] for index in range(places))
            loads = Signal(places, init=1)
            m.d.sync += loads.eq(next_loads)
            # Exactly the register whose turn it is, when it is free and may load.
            m.d.comb += self.i.ready.eq(loads.any())
        else:
            next_loads = Cat((next_write_turn == index) & ~next_full[index] for index in range(places))
            loads = Cat((write_turn == index) & ~full[index] for index in range(places))
            # The registers fill and empty in turn, so the one to fill is free whenever
            # any is.
            m.d.comb += self.i.ready.eq(~full.all())
        # ... and the one to empty is full whenever any is.
        m.d.comb += self.o.valid.eq(full.any())

        group = self.select_fanout or max(width, 1)
        for lsb in range(0, width, group):
            bits = slice(lsb, lsb + group)
            if self.select_fanout is None:
                turn, load = read_turn, loads
            else:
                # Per group, its own copies of the read turn and of the load enables,
                # registered from the state the ring is about to have.
                copy = lsb // group
                turn = Signal.like(read_turn, name=f"read_turn_copy{copy}", attrs={"keep": 1})
                load = Signal(places, name=f"load_copy{copy}", init=1, attrs={"keep": 1})
                m.d.sync += [turn.eq(next_read_turn), load.eq(next_loads)]
            chosen_bits = Array(Value.cast(slot)[bits] for slot in slots)
            m.d.comb += Value.cast(self.o.payload)[bits].eq(chosen_bits[turn])
            for index, slot in enumerate(slots):
                with m.If(load[index]):
                    m.d.sync += Value.cast(slot)[bits].eq(Value.cast(self.i.payload)[bits])
        return m


class PingPongBuffer(RegisterRing):
    """A :class:`RegisterRing` of two registers."""

    def __init__(self, payload_shape):
        super().__init__(payload_shape, 2)


class Queue(_Stage):
    """``depth`` payloads, first in, first out, in memory with a registered read (block
    RAM on an FPGA); ``level`` is how many it holds.

    ``i.ready`` is high exactly while fewer than ``depth`` are held, the one offered on
    ``o`` included, and does not depend on ``i.valid``: a producer may offer exactly when
    it sees room (``i.valid`` formed from ``i.ready``). A payload entering an empty queue
    is offered two cycles later.
    """

    def __init__(self, payload_shape, depth):
        self.depth = _checked_count("depth", depth)
        super().__init__(payload_shape, level=Out(range(depth + 1)))

    def elaborate(self, platform):
        m = Module()
        # SyncFIFOBuffered refuses a write while the entries behind its output register
        # fill their memory, whether or not the output register is free: at depth 2 it
        # would refuse with one entry held. One entry more, and the level compared here,
        # make the room exactly ``depth``.
        m.submodules.fifo = fifo = SyncFIFOBuffered(
            width=Shape.cast(self.payload_shape).width, depth=self.depth + 1)
        # ``i.ready`` comes from a register, formed from the level the queue is about to
        # have, rather than from a comparison of the FIFO's level, which is itself a sum: the
        # producer's handshake (and whatever stalls on a full queue) sees a flop.
        room = Signal(init=1)
        next_level = Signal.like(self.level)
        m.d.comb += next_level.eq(fifo.level + fifo.w_en - (fifo.r_rdy & fifo.r_en))
        m.d.sync += room.eq(next_level < self.depth)
        m.d.comb += [
            self.level.eq(fifo.level),
            self.i.ready.eq(room),
            fifo.w_en.eq(self.i.valid & self.i.ready),
            fifo.w_data.eq(self.i.payload),
            self.o.valid.eq(fifo.r_rdy),
            self.o.payload.eq(fifo.r_data),
            fifo.r_en.eq(self.o.ready),
        ]
        return m


class RoundRobinMerge(wiring.Component):
    """``count`` streams into one, without a register on the data path.

    Each cycle ``o`` offers the payload of one offering input, and ``index`` says which.
    With several offering, the first after the one taken last wins (input 0 first after
    reset), so with all of them offering each gets one transfer in ``count``. The choice
    is held while the offered payload waits, so ``o`` keeps the stream rules as long as
    every input does.

    ``registered_choice``: the choice is a register, made a cycle ahead from the inputs
    then offering (which, by the stream rules, still offer until taken), so no input's
    ``valid`` reaches the payload's multiplexers. The price is a cycle whenever the
    choice moves to an input that starts offering while the chosen one is idle.
    ``select_fanout`` (with it): the payload bits behind one copy of the choice at most;
    each group of that many bits has its own copy (marked ``keep``).
    """

    def __init__(self, payload_shape, count, *, registered_choice=False, select_fanout=None):
        self.count = _checked_count("count", count)
        self.payload_shape = _checked_shape(payload_shape)
        if not isinstance(registered_choice, bool):
            raise TypeError(f"registered_choice must be a bool, not {registered_choice!r}")
        if select_fanout is not None and not registered_choice:
            raise ValueError("select_fanout needs registered_choice: only a registered choice "
                             "has copies")
        self.registered_choice = registered_choice
        self.select_fanout = None if select_fanout is None else \
            _checked_count("select_fanout", select_fanout)
        super().__init__({
            "i":     In(stream.Signature(payload_shape)).array(count),
            "o":     Out(stream.Signature(payload_shape)),
            "index": Out(range(count)),
        })

    def elaborate(self, platform):
        m = Module()
        count = self.count
        offering = Signal(count)
        for index in range(count):
            m.d.comb += offering[index].eq(self.i[index].valid)
        grant = Signal(count, init=1 if self.registered_choice else 0)
        if self.registered_choice:
            next_grant = self._registered_choice(m, offering, grant)
        else:
            self._choice(m, offering, grant)

        m.d.comb += [
            self.o.valid.eq((offering & grant).any()),
            self.index.eq(one_hot_index(grant)[:len(self.index)]),
        ]
        for index in range(count):
            m.d.comb += self.i[index].ready.eq(self.o.ready & grant[index])
        payloads = [Value.cast(port.payload) for port in self.i]
        width = Shape.cast(self.payload_shape).width
        group = self.select_fanout or max(width, 1)
        for lsb in range(0, width, group):
            bits = slice(lsb, lsb + group)
            chooser = grant
            if self.select_fanout is not None:
                chooser = Signal(count, name=f"grant_copy{lsb // group}", init=1,
                                 attrs={"keep": 1})
                m.d.sync += chooser.eq(next_grant)
            m.d.comb += Value.cast(self.o.payload)[bits].eq(
                one_hot_select(chooser, [payload[bits] for payload in payloads]))
        return m

    def _choice(self, m, offering, grant):
        count = self.count
        # ``last`` is the input taken last, one-hot (none after reset: input 0 comes
        # first); the inputs above it come first.
        last = Signal(count)
        after_last = Signal(count)
        for index in range(1, count):
            m.d.comb += after_last[index].eq(last[:index].any())
        preferred = offering & after_last
        candidates = Mux(preferred.any(), preferred, offering)

        # The choice made while the output waited, kept until it is taken.
        held = Signal()
        held_grant = Signal(count)
        m.d.comb += grant.eq(Mux(held, held_grant, first_one(candidates)))
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += [held.eq(0), last.eq(grant)]
        with m.Elif(self.o.valid):
            m.d.sync += [held.eq(1), held_grant.eq(grant)]
        with m.Else():
            m.d.sync += held.eq(0)

    def _registered_choice(self, m, offering, grant):
        count = self.count
        # The inputs that will still offer next cycle: those offering now but the one
        # taken now. Among them the first after the chosen one, then the first of all;
        # none waiting, the choice stays (the input taken now may offer again).
        taken = Mux(self.o.valid & self.o.ready, grant, 0)
        waiting = offering & ~taken
        after_grant = Signal(count)
        for index in range(1, count):
            m.d.comb += after_grant[index].eq(grant[:index].any())
        preferred = waiting & after_grant
        candidates = Mux(preferred.any(), preferred, waiting)
        next_grant = Signal(count)
        m.d.comb += next_grant.eq(Mux((self.o.valid & ~self.o.ready) | ~candidates.any(),
                                      grant, first_one(candidates)))
        m.d.sync += grant.eq(next_grant)
        return next_grant
