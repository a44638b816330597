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
:class:`SpillRegister`    0                 1 per cycle         none (a transfer the
                                                                output refuses waits in
                                                                its register)
:class:`RegisterSlice`    1                 1 per cycle         ``o.valid``, ``o.payload``
:class:`SkidBuffer`       1                 1 per cycle         all, ``i.ready`` included
:class:`RegisterRing`     1                 1 per cycle         none (one level of logic
                                                                after registers)
:class:`PingPongBuffer`   1                 1 per cycle         as a two-place ring
:class:`WideStage`        1                 1 per cycle         ``i.ready``; ``o`` as a
                                                                ring's
:class:`Queue`            2                 1 per cycle from    ``o.valid``, ``o.payload``,
                                            depth 3             ``i.ready``
:class:`RoundRobinMerge`  0                 1 per cycle         none (with
                                                                ``registered_choice``:
                                                                the choice)
========================  ================  ==================  ==========================
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Shape, Signal, Value, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .onehot import first_one, one_hot_index, one_hot_select


__all__ = ["SpillRegister", "RegisterSlice", "SkidBuffer", "RegisterRing", "PingPongBuffer", "WideStage", "Queue",
           "RoundRobinMerge"]


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


class SpillRegister(_Stage):
    """A stream passed straight through, with one register that catches what the output
    refuses: a producer behind it that holds as a whole while its output waits (a
    pipelined unit) keeps going through one refused cycle, instead of holding.

    ``o`` offers the register while it is full, else ``i`` as it comes (no cycle added).
    ``i.ready`` is high while the register is empty, or when ``o`` takes it (then ``i``
    takes its place), so it follows ``o.ready`` as a plain wire would. It holds at most
    one item, in order with the next.
    """

    def elaborate(self, platform):
        m = Module()
        spill = Signal(self.payload_shape)
        full = Signal()
        m.d.comb += [
            self.o.valid.eq(full | self.i.valid),
            self.o.payload.eq(Mux(full, spill, self.i.payload)),
            self.i.ready.eq(~full | self.o.ready),
        ]
        # The register takes ``i`` whenever ``i`` can move and does not pass straight out.
        caught = self.i.valid & self.i.ready & (full | ~self.o.ready)
        with m.If(self.i.ready):
            m.d.sync += spill.eq(self.i.payload)
        with m.If(caught):
            m.d.sync += full.eq(1)
        with m.Elif(self.o.ready):
            m.d.sync += full.eq(0)
        return m


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

    ``select_fanout``: when given, the payload bits that one copy of the buffer's state
    (whether the skid register is full, whether the output offers) steers at most; each
    group of that many bits has its own copies (marked ``keep``), so that no single net
    selects or enables every bit of a wide payload.
    """

    def __init__(self, payload_shape, *, select_fanout=None):
        self.select_fanout = None if select_fanout is None else \
            _checked_count("select_fanout", select_fanout)
        super().__init__(payload_shape)

    def elaborate(self, platform):
        m = Module()
        width = Shape.cast(self.payload_shape).width
        skid = Signal(self.payload_shape)
        skid_full = Signal()
        m.d.comb += self.i.ready.eq(~skid_full)
        advance = ~self.o.valid | self.o.ready
        with m.If(advance):
            m.d.sync += self.o.valid.eq(skid_full | self.i.valid)
            with m.If(skid_full):
                m.d.sync += skid_full.eq(0)
        with m.Elif(self.i.valid & self.i.ready):
            m.d.sync += skid_full.eq(1)
        # Both payload registers load whether or not a transfer is offered (what they take
        # without one is never offered), so the producer's ``valid`` is in neither's enable:
        # the skid register loads while it is empty, the output register while it is
        # empty or emptying.
        next_skid_full = Mux(advance, 0, skid_full | (self.i.valid & self.i.ready))
        next_valid = Mux(advance, skid_full | self.i.valid, self.o.valid)
        group = self.select_fanout or max(width, 1)
        for lsb in range(0, width, group):
            bits = slice(lsb, lsb + group)
            if self.select_fanout is None:
                full, offering = skid_full, self.o.valid
            else:
                copy = lsb // group
                full = Signal(name=f"skid_full_copy{copy}", attrs={"keep": 1})
                offering = Signal(name=f"valid_copy{copy}", attrs={"keep": 1})
                m.d.sync += [full.eq(next_skid_full), offering.eq(next_valid)]
            skid_bits = Value.cast(skid)[bits]
            with m.If(~offering | self.o.ready):
                m.d.sync += Value.cast(self.o.payload)[bits].eq(
                    Mux(full, skid_bits, Value.cast(self.i.payload)[bits]))
            with m.If(~full):
                m.d.sync += skid_bits.eq(Value.cast(self.i.payload)[bits])
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

    ``registered_bits``: payload bits (indices) whose value at the head is a register of its
    own, formed a cycle ahead from what the ring is about to hold, so that logic deciding
    from them whether the head may leave starts at a flop rather than after the read turn's
    multiplexer. ``next_head`` gives those bits' values for the next cycle (what the registers
    are about to hold), for a consumer that registers its own decision a cycle ahead.

    ``separate_ready``: ``i.ready`` is a register of its own (marked ``keep``, as is the one
    the ring's own logic reads), so that a producer placed far from the ring sees a flop
    beside it and the ring's own room stays beside the ring.
    """

    def __init__(self, payload_shape, places, *, select_fanout=None, fill_side_enables=False,
                 registered_bits=(), separate_ready=False):
        if isinstance(places, int) and not isinstance(places, bool) and places < 2:
            raise ValueError(f"places must be at least 2, not {places}")
        self.places = _checked_count("places", places)
        self.select_fanout = None if select_fanout is None else \
            _checked_count("select_fanout", select_fanout)
        if not isinstance(fill_side_enables, bool):
            raise TypeError(f"fill_side_enables must be a bool, not {fill_side_enables!r}")
        self.fill_side_enables = fill_side_enables
        if not isinstance(separate_ready, bool):
            raise TypeError(f"separate_ready must be a bool, not {separate_ready!r}")
        self.separate_ready = separate_ready
        registered_bits = tuple(registered_bits)
        super().__init__(payload_shape,
                         **({"next_head": Out(len(registered_bits))} if registered_bits else {}))
        width = Shape.cast(payload_shape).width
        bad = [bit for bit in registered_bits
               if not isinstance(bit, int) or isinstance(bit, bool) or not 0 <= bit < width]
        if bad or len(set(registered_bits)) != len(registered_bits):
            raise ValueError(f"registered_bits must be distinct bit indices below the payload's "
                             f"{width} bits, not {registered_bits!r}")
        self.registered_bits = registered_bits

    def elaborate(self, platform):
        m = Module()
        places = self.places
        width = Shape.cast(self.payload_shape).width
        # A register's payload means something only while it is full: no reset, which
        # keeps a wide ring off the reset's net.
        slots = [Signal(self.payload_shape, name=f"slot{index}", reset_less=True)
                 for index in range(places)]
        full = Signal(places)
        # The turns are one-hot: moving one on is a rotation, one LUT per bit wherever a
        # copy of a turn is kept.
        write_turn = Signal(places, init=1)
        read_turn = Signal(places, init=1)
        # A register free (the producer sees it, or its copy, as ``i.ready``).
        keep = {"keep": 1} if self.separate_ready else {}
        room = Signal(init=1, attrs=keep)
        push = self.i.valid & room
        pop = self.o.valid & self.o.ready
        next_write_turn = _moved_on(write_turn, push)
        next_read_turn = _moved_on(read_turn, pop)
        next_full = (full & ~Mux(pop, read_turn, 0)) | Mux(push, write_turn, 0)
        m.d.sync += [write_turn.eq(next_write_turn), read_turn.eq(next_read_turn),
                     full.eq(next_full)]
        # The registers fill and empty in turn, so the one to empty is full whenever any is.
        offering = Signal()
        m.d.sync += offering.eq(next_full.any())
        m.d.comb += self.o.valid.eq(offering)
        # A free register loads whatever is offered while it is the one to fill; the push
        # that fills it is the last load until it is emptied.
        if self.fill_side_enables:
            # From the fullness of this cycle, not the next: a register emptied now is
            # not yet free. The register filled now is not the next to fill (places > 1),
            # so pushes need no term of their own.
            def loads_after(turn):
                return _moved_on(turn, push) & ~full
            loads = Signal(places, init=1)
            next_room = loads_after(write_turn).any()
            m.d.sync += loads.eq(loads_after(write_turn))
        else:
            loads = write_turn & ~full
            # ... and the one to fill is free whenever any is.
            next_room = ~next_full.all()
        m.d.sync += room.eq(next_room)
        if self.separate_ready:
            ready = Signal(init=1, name="ready_copy", attrs=keep)
            m.d.sync += ready.eq(next_room)
            m.d.comb += self.i.ready.eq(ready)
        else:
            m.d.comb += self.i.ready.eq(room)

        if self.registered_bits:
            # What each register holds next cycle: it loads whatever is offered while its
            # load enable is high.
            payload = Value.cast(self.i.payload)
            head_bits = Signal(len(self.registered_bits), name="head_bits", reset_less=True)
            for position, bit in enumerate(self.registered_bits):
                held_next = [Mux(loads[index], payload[bit], Value.cast(slot)[bit])
                             for index, slot in enumerate(slots)]
                m.d.comb += self.next_head[position].eq(one_hot_select(next_read_turn, held_next))
            m.d.sync += head_bits.eq(self.next_head)
        group = self.select_fanout or max(width, 1)
        for lsb in range(0, width, group):
            bits = slice(lsb, lsb + group)
            if self.select_fanout is None:
                turn, load = read_turn, loads
            else:
                # Per group, its own copies of the turns and of the load enables, each
                # moved on from itself: what crosses to the group is the push or the pop,
                # and one LUT forms each copy's next value beside it.
                copy = lsb // group
                turn = Signal(places, name=f"read_turn_copy{copy}", init=1, attrs={"keep": 1})
                filling = Signal(places, name=f"write_turn_copy{copy}", init=1, attrs={"keep": 1})
                m.d.sync += [turn.eq(_moved_on(turn, pop)), filling.eq(_moved_on(filling, push))]
                if self.fill_side_enables:
                    load = Signal(places, name=f"load_copy{copy}", init=1, attrs={"keep": 1})
                    m.d.sync += load.eq(loads_after(filling))
                else:
                    load = filling & ~full
            m.d.comb += Value.cast(self.o.payload)[bits].eq(
                one_hot_select(turn, [Value.cast(slot)[bits] for slot in slots]))
            for index, slot in enumerate(slots):
                with m.If(load[index]):
                    m.d.sync += Value.cast(slot)[bits].eq(Value.cast(self.i.payload)[bits])
        for position, bit in enumerate(self.registered_bits):
            m.d.comb += Value.cast(self.o.payload)[bit].eq(head_bits[position])
        return m


def _moved_on(turn, step):
    """The one-hot ``turn`` moved to the next place when ``step`` is high."""
    return Mux(step, Cat(turn[-1], turn[:-1]), turn)


class PingPongBuffer(RegisterRing):
    """A :class:`RegisterRing` of two registers."""

    def __init__(self, payload_shape):
        super().__init__(payload_shape, 2)


class WideStage(RegisterRing):
    """A one-cycle stage for a wide payload on an FPGA: a :class:`RegisterRing` of
    :attr:`PLACES` registers with its load enables from its fill side and a copy of its read
    turn per :attr:`SELECT_FANOUT` payload bits. No handshake reaches a load enable or a
    wide multiplexer in its own cycle, ``i.ready`` is a register, and the stage passes one
    transfer per cycle (the three places hide the refill delay of fill-side enables).
    ``registered_bits`` and ``separate_ready`` as for :class:`RegisterRing`."""

    PLACES = 3
    SELECT_FANOUT = 32

    def __init__(self, payload_shape, *, registered_bits=(), separate_ready=False):
        super().__init__(payload_shape, self.PLACES, select_fanout=self.SELECT_FANOUT,
                         fill_side_enables=True, registered_bits=registered_bits,
                         separate_ready=separate_ready)


class Queue(_Stage):
    """``depth`` payloads, first in, first out, in memory (distributed RAM on an FPGA) read
    into an output register; ``level`` is how many it holds.

    ``i.ready`` is high exactly while fewer than ``depth`` are held, the one offered on
    ``o`` included, and does not depend on ``i.valid``: a producer may offer exactly when
    it sees room (``i.valid`` formed from ``i.ready``). A payload entering an empty queue
    is offered two cycles later.

    ``bank_bits``: when given, the payload's columns are kept in memories of that many
    bits each, every one with its own copies (marked ``keep``) of the write and read
    positions and of the output register's state, so that no single net reaches every
    memory cell or output bit of a wide payload.
    """

    def __init__(self, payload_shape, depth, *, bank_bits=None):
        self.depth = _checked_count("depth", depth)
        self.bank_bits = None if bank_bits is None else _checked_count("bank_bits", bank_bits)
        super().__init__(payload_shape, level=Out(range(depth + 1)))

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        width = Shape.cast(self.payload_shape).width
        # Memory positions wrap at a power of two; the room kept below keeps at most
        # ``depth`` entries in it.
        position_bits = max(1, (depth - 1).bit_length())

        def control(suffix, keep):
            """One copy of the queue's state, moved on from itself by the producer's
            ``valid`` and the consumer's ``ready`` alone: positions, entries in memory (as
            a thermometer code: bit n set while more than n are held, so whether any is
            held is a flop), whether the output register offers, whether there is room."""
            attrs = {"keep": 1} if keep else {}
            state = dict(
                writes_at=Signal(position_bits, name=f"write_position{suffix}", attrs=attrs),
                reads_at=Signal(position_bits, name=f"read_position{suffix}", attrs=attrs),
                stored=Signal(depth, name=f"stored{suffix}", attrs=attrs),
                offering=Signal(name=f"offering{suffix}", attrs=attrs),
                room=Signal(name=f"room{suffix}", init=1, attrs=attrs),
            )
            stored = state["stored"]
            push = self.i.valid & state["room"]
            one_more = Cat(1, stored[:-1])
            one_less = Cat(stored[1:], 0)

            def moved_on(advance):
                """The next state if the output register does (``advance``) or does not
                move on."""
                pop = advance & stored[0]
                next_stored = Mux(push & ~pop, one_more, Mux(pop & ~push, one_less, stored))
                next_offering = Mux(advance, stored[0], 1)
                # Room while the level the queue is about to have (held in memory, and in
                # the output register) is below the depth: the producer's handshake (and
                # whatever stalls on a full queue) sees a flop.
                full_after = next_stored[depth - 1] | \
                    (next_offering & (next_stored[depth - 2] if depth > 1 else 1))
                return Cat(next_stored, next_offering, ~full_after)
            # Both outcomes formed from the copy's own state, the consumer's ``ready`` (the
            # latest-arriving input, from far away) choosing between them last.
            advance = ~state["offering"] | self.o.ready
            pop = advance & stored[0]
            m.d.sync += [
                state["writes_at"].eq(state["writes_at"] + push),
                state["reads_at"].eq(Mux(self.o.ready, state["reads_at"] + stored[0],
                                         state["reads_at"] + (~state["offering"] & stored[0]))),
                Cat(stored, state["offering"], state["room"]).eq(
                    Mux(self.o.ready, moved_on(1), moved_on(~state["offering"]))),
            ]
            state["pop"] = pop
            return state

        queue = control("", keep=False)
        m.d.comb += [
            self.i.ready.eq(queue["room"]),
            self.o.valid.eq(queue["offering"]),
            self.level.eq(sum(queue["stored"]) + queue["offering"]),
        ]

        group = self.bank_bits or max(width, 1)
        for bank, lsb in enumerate(range(0, width, group)):
            bits = slice(lsb, lsb + group)
            bank_width = len(Value.cast(self.i.payload)[bits])
            # Each bank has a copy of the whole state beside it, so what reaches a bank
            # from elsewhere is the producer's valid and the consumer's ready only.
            state = queue if self.bank_bits is None else control(bank, keep=True)
            memory = Memory(shape=unsigned(bank_width), depth=1 << position_bits, init=[])
            m.submodules[f"storage{bank}"] = memory
            write_port = memory.write_port()
            read_port = memory.read_port(domain="comb")
            m.d.comb += [
                write_port.addr.eq(state["writes_at"]),
                write_port.data.eq(Value.cast(self.i.payload)[bits]),
                # Written every cycle: the position to write is always free (at most
                # ``depth - 1`` entries wait in memory while the output register holds
                # one, and the memory has room for ``depth``), and only a push moves on from
                # it. No handshake then reaches the memory's write enables.
                write_port.en.eq(1),
                read_port.addr.eq(state["reads_at"]),
            ]
            with m.If(state["pop"]):
                m.d.sync += Value.cast(self.o.payload)[bits].eq(read_port.data)
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

    ``deferred``: inputs (their indices) chosen only when no other input offers (with a
    registered choice: offers and is not being taken); the deferred ones take turns among
    themselves, and the others among themselves, as above. A deferred input waits as long
    as the others keep offering: for inputs whose offers can wait without holding their
    source (a queue behind them that never fills).
    """

    def __init__(self, payload_shape, count, *, registered_choice=False, select_fanout=None,
                 deferred=()):
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
        try:
            deferred = tuple(deferred)
        except TypeError:
            raise TypeError(f"deferred must be a collection of input indices, not "
                            f"{deferred!r}") from None
        if any(isinstance(index, bool) or not isinstance(index, int) or
               not 0 <= index < self.count for index in deferred) or \
                len(set(deferred)) != len(deferred):
            raise ValueError(f"deferred must be distinct input indices below {self.count}, "
                             f"not {deferred!r}")
        self.deferred = frozenset(deferred)
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

    def _first_the_undeferred(self, offering):
        """The offering inputs that are not deferred, or, with none of those, all."""
        if not self.deferred:
            return offering
        mask = Const(sum(1 << index for index in self.deferred), self.count)
        undeferred = offering & ~mask
        return Mux(undeferred.any(), undeferred, offering)

    def _choice(self, m, offering, grant):
        count = self.count
        # ``last`` is the input taken last, one-hot (none after reset: input 0 comes
        # first); the inputs above it come first.
        last = Signal(count)
        after_last = Signal(count)
        for index in range(1, count):
            m.d.comb += after_last[index].eq(last[:index].any())
        eligible = self._first_the_undeferred(offering)
        preferred = eligible & after_last
        candidates = Mux(preferred.any(), preferred, eligible)

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
        waiting = self._first_the_undeferred(offering & ~taken)
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
