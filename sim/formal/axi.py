"""The rules of AXI4 and AXI4-Lite as formal properties, for a harness around a port of a
design: each rule is an ``Assert`` on the channels the design drives and an ``Assume`` on
those its environment drives, so a proof shows the design keeps the rules whenever the
other side does.

Rules (AMBA AXI, IHI 0022):

- handshake, every channel: once ``VALID`` is high it stays high, its payload unchanged,
  until ``READY`` takes it;
- write data: ``WLAST`` on exactly the last beat of its burst (``AWLEN + 1`` beats), the
  bursts' data in the order of their addresses (data may run ahead of its address);
- write responses: ``BVALID`` only for a burst whose address and last beat were both
  taken in an earlier cycle, one response per burst, per id in order;
- read data: ``RVALID`` only for an outstanding read burst of its id, the oldest of that id
  (per id in order), ``ARLEN + 1`` beats with ``RLAST`` on exactly the last;
- AXI4-Lite: the handshake rules, one response per request (``BVALID`` only after both
  the address and the data of a write were taken).

Shadow state is kept small by bounds the environment is assumed to keep: at most
``max_outstanding`` write bursts and as many read bursts open, bursts of at most
``max_beats`` beats, write data at most one burst ahead of its address. A side that issues
requests keeps the bounds on them by not offering more (a GPU-side slave's environment) or
the other side by not taking more (a memory-side master's environment). Bursts issued by
the design must keep ``max_beats`` too (asserted), so the checker never loses count.
"""

from amaranth.hdl import Array, Assert, Assume, Cat, Signal

from matndp.hw.fpga.axi import AXI4LiteSignature, AXI4Signature


__all__ = ["DESIGN_ROLES", "axi4_rules", "axi4_lite_rules"]


#: What the design is on the port: ``"slave"`` drives B and R, ``"master"`` AW, W and AR.
DESIGN_ROLES = ("slave", "master")
_FORWARD = ("aw", "w", "ar")


class _Port:
    """The rules of one port: ``check(channel, holds, message)`` asserts a rule on a channel
    the design drives and assumes it on one its environment drives."""

    def __init__(self, m, bus, signature, design, name):
        if design not in DESIGN_ROLES:
            raise ValueError(f"design must be one of {', '.join(DESIGN_ROLES)}, not {design!r}")
        self.m, self.bus, self.signature, self.design, self.name = m, bus, signature, design, name

    def drives(self, channel):
        """Whether the design drives ``channel``."""
        return (channel in _FORWARD) == (self.design == "master")

    def check(self, channel, holds, message):
        rule = Assert if self.drives(channel) else Assume
        self.m.d.comb += rule(holds, f"{self.name}: {message}")

    def environment(self, holds, message):
        self.m.d.comb += Assume(holds, f"{self.name}: {message}")

    def signal(self, channel, suffix):
        return getattr(self.bus, f"{channel}{suffix}")

    def fire(self, channel):
        return self.signal(channel, "valid") & self.signal(channel, "ready")

    def withhold(self, channel, full, what):
        """The bound ``full`` stops ``channel``: its issuer does not offer, or, where the
        design issues, the environment does not take."""
        stopper = "valid" if not self.drives(channel) else "ready"
        self.environment(~full | ~self.signal(channel, stopper),
                         f"{channel.upper()} stopped at the harness's bound of {what}")

    def handshakes(self):
        m = self.m
        for channel, layout in self.signature.layouts.items():
            payload = Cat(self.signal(channel, field) for field, _ in layout)
            waiting = Signal(name=f"{self.name}_{channel}_waiting")
            offered = Signal(len(payload), name=f"{self.name}_{channel}_offered")
            m.d.sync += [waiting.eq(self.signal(channel, "valid") & ~self.signal(channel, "ready")),
                         offered.eq(payload)]
            self.check(channel, ~waiting | (self.signal(channel, "valid") & (payload == offered)),
                       f"{channel.upper()}VALID dropped or its payload changed before "
                       f"{channel.upper()}READY")


class _ShadowQueue:
    """A queue of ``depth`` (a power of two) values of ``width`` bits: set ``push`` /
    ``pushed`` and ``pop`` combinationally; ``first`` is the oldest."""

    def __init__(self, m, width, depth, name):
        bits = (depth - 1).bit_length()
        self.entries = Array(Signal(width, name=f"{name}{index}") for index in range(depth))
        self.head = Signal(bits, name=f"{name}_head")
        self.count = Signal(range(depth + 1), name=f"{name}_count")
        self.push, self.pop = Signal(name=f"{name}_push"), Signal(name=f"{name}_pop")
        self.pushed = Signal(width, name=f"{name}_pushed")
        self.first = self.entries[self.head]
        tail = Signal(bits, name=f"{name}_tail")
        m.d.comb += tail.eq(self.head + self.count)
        with m.If(self.push):
            m.d.sync += self.entries[tail].eq(self.pushed)
        with m.If(self.pop):
            m.d.sync += self.head.eq(self.head + 1)
        m.d.sync += self.count.eq(self.count + self.push - self.pop)


def _check_bounds(max_beats, max_outstanding):
    for name, value in (("max_beats", max_beats), ("max_outstanding", max_outstanding)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1 or value & (value - 1):
            raise ValueError(f"{name} must be a power of two, not {value!r}")


def axi4_rules(m, bus, signature, *, design, max_beats, max_outstanding, name):
    """Add the AXI4 rules of ``bus`` (an :class:`~matndp.hw.fpga.axi.AXI4Signature`
    interface, or any object with its signals as attributes) to ``m``; ``design`` is the
    design's role on the port (:data:`DESIGN_ROLES`), ``name`` prefixes the rules'
    messages and the shadow state's signals."""
    if not isinstance(signature, AXI4Signature):
        raise TypeError(f"signature must be an AXI4Signature, not {signature!r}")
    _check_bounds(max_beats, max_outstanding)
    port = _Port(m, bus, signature, design, name)
    port.handshakes()
    if "write" in signature.halves:
        _write_rules(port, max_beats, max_outstanding)
    if "read" in signature.halves:
        _read_rules(port, max_beats, max_outstanding)


def _burst_length(port, channel, max_beats):
    """The burst's ``AxLEN`` in the checker's bits, asserted or assumed within the bound."""
    length = port.signal(channel, "len")
    port.check(channel, ~port.signal(channel, "valid") | (length < max_beats),
               f"{channel.upper()}LEN beyond the harness's bound of {max_beats} beats")
    return length[:max(1, (max_beats - 1).bit_length())]


def _write_rules(port, max_beats, max_outstanding):
    m, name = port.m, port.name
    ids = 1 << port.signature.id_width
    aw_fire, w_fire = port.fire("aw"), port.fire("w")
    aw_length = _burst_length(port, "aw", max_beats)
    last = port.signal("w", "last")

    # Bursts whose address was taken and whose data is not complete, oldest first.
    pending = _ShadowQueue(m, len(aw_length) + port.signature.id_width, max_outstanding,
                           f"{name}_aw_pending")
    pending_length, pending_id = pending.first[:len(aw_length)], pending.first[len(aw_length):]
    beat = Signal(range(max_beats + 1), name=f"{name}_w_beat")     # of the oldest data burst
    # The oldest data burst is complete, its address not taken yet: data one burst ahead.
    ahead = Signal(name=f"{name}_w_ahead")
    ahead_beats = Signal(range(max_beats + 1), name=f"{name}_w_ahead_beats")
    # Bursts taken and not answered on B (the bound), and those whose address and data
    # are both in, by id: what B may answer.
    open_bursts = Signal(range(max_outstanding + 1), name=f"{name}_writes_open")
    owed = Array(Signal(range(max_outstanding + 1), name=f"{name}_b_owed{index}")
                 for index in range(ids))

    port.withhold("aw", open_bursts == max_outstanding, f"{max_outstanding} open write bursts")
    if port.drives("w"):
        port.environment(~ahead | ~port.signal("w", "ready") | aw_fire,
                         "W stopped: the harness lets data run at most one burst ahead")
    else:
        port.environment(~ahead | ~port.signal("w", "valid"),
                         "W stopped: the harness lets data run at most one burst ahead")

    known = (pending.count != 0) | aw_fire
    length = Signal.like(aw_length, name=f"{name}_w_length")
    m.d.comb += length.eq(aw_length)
    with m.If(pending.count != 0):
        m.d.comb += length.eq(pending_length)
    completed = Signal(name=f"{name}_write_completed")       # a burst's address and data in
    completed_id = Signal(port.signature.id_width, name=f"{name}_write_completed_id")
    consumes_aw = Signal(name=f"{name}_aw_consumed")          # this cycle's AW completes a burst
    with m.If(ahead):
        port.check("w", ~w_fire | aw_fire,
                   "a second burst's data before the address of the first")
        with m.If(aw_fire):
            port.check("aw", ahead_beats == aw_length + 1,
                       "a burst's data ran ahead with other than AWLEN + 1 beats")
            m.d.comb += [completed.eq(1), completed_id.eq(port.signal("aw", "id")),
                         consumes_aw.eq(1)]
            m.d.sync += ahead.eq(0)
            with m.If(w_fire):
                # The next burst's first beat, its address not yet taken.
                with m.If(last):
                    m.d.sync += [ahead.eq(1), ahead_beats.eq(1), beat.eq(0)]
                with m.Else():
                    m.d.sync += beat.eq(1)
    with m.Else():
        with m.If(aw_fire & (pending.count == 0) & ~w_fire):
            port.check("aw", beat <= aw_length,
                       "a burst's data ran ahead with more than AWLEN + 1 beats")
        with m.If(w_fire):
            with m.If(known):
                port.check("w", (beat <= length) & (last == (beat == length)),
                           "WLAST not on exactly beat AWLEN + 1 of its burst")
                with m.If(last):
                    m.d.sync += beat.eq(0)
                    m.d.comb += [completed.eq(1), pending.pop.eq(pending.count != 0),
                                 consumes_aw.eq(pending.count == 0)]
                    m.d.comb += completed_id.eq(port.signal("aw", "id"))
                    with m.If(pending.count != 0):
                        m.d.comb += completed_id.eq(pending_id)
                with m.Else():
                    m.d.sync += beat.eq(beat + 1)
            with m.Elif(last):
                m.d.sync += [ahead.eq(1), ahead_beats.eq(beat + 1), beat.eq(0)]
            with m.Else():
                m.d.sync += beat.eq(beat + 1)
    m.d.comb += [pending.push.eq(aw_fire & ~consumes_aw),
                 pending.pushed.eq(Cat(aw_length, port.signal("aw", "id")))]

    b_valid, b_id = port.signal("b", "valid"), port.signal("b", "id")
    port.check("b", ~b_valid | (owed[b_id] != 0),
               "BVALID for a burst whose address and last beat were not both taken")
    b_fire = port.fire("b")
    for index in range(ids):
        m.d.sync += owed[index].eq(owed[index] + (completed & (completed_id == index))
                                   - (b_fire & (b_id == index)))
    m.d.sync += open_bursts.eq(open_bursts + aw_fire - b_fire)


def _read_rules(port, max_beats, max_outstanding):
    m, name = port.m, port.name
    ids = 1 << port.signature.id_width
    ar_fire, r_fire = port.fire("ar"), port.fire("r")
    ar_length = _burst_length(port, "ar", max_beats)
    ar_id = port.signal("ar", "id")
    r_valid, r_id, r_last = port.signal("r", "valid"), port.signal("r", "id"), port.signal("r", "last")

    open_bursts = Signal(range(max_outstanding + 1), name=f"{name}_reads_open")
    port.withhold("ar", open_bursts == max_outstanding, f"{max_outstanding} open read bursts")
    m.d.sync += open_bursts.eq(open_bursts + ar_fire - (r_fire & r_last))

    # Per id: its open bursts' lengths, oldest first, and the beats of the oldest sent.
    queues = [_ShadowQueue(m, len(ar_length), max_outstanding, f"{name}_ar{index}")
              for index in range(ids)]
    beats = Array(Signal(range(max_beats), name=f"{name}_r_beat{index}") for index in range(ids))
    open_by_id = Array(queue.count for queue in queues)
    length_by_id = Array(queue.first for queue in queues)
    port.check("r", ~r_valid | (open_by_id[r_id] != 0),
               "RVALID for an id with no read burst open")
    port.check("r", ~r_valid | (r_last == (beats[r_id] == length_by_id[r_id])),
               "RLAST not on exactly beat ARLEN + 1 of the oldest burst of its id")
    for index, queue in enumerate(queues):
        mine = r_fire & (r_id == index)
        m.d.comb += [queue.push.eq(ar_fire & (ar_id == index)), queue.pushed.eq(ar_length),
                     queue.pop.eq(mine & r_last)]
        with m.If(mine):
            m.d.sync += beats[index].eq(beats[index] + 1)
            with m.If(r_last):
                m.d.sync += beats[index].eq(0)


def axi4_lite_rules(m, bus, signature, *, design, max_outstanding, name):
    """Add the AXI4-Lite rules of ``bus`` (an
    :class:`~matndp.hw.fpga.axi.AXI4LiteSignature` interface) to ``m``, as
    :func:`axi4_rules` does; at most ``max_outstanding`` writes and as many reads open."""
    if not isinstance(signature, AXI4LiteSignature):
        raise TypeError(f"signature must be an AXI4LiteSignature, not {signature!r}")
    _check_bounds(1, max_outstanding)
    port = _Port(m, bus, signature, design, name)
    port.handshakes()
    counters = {}
    for channel in ("aw", "w", "ar"):
        # Requests of the channel taken and not answered yet.
        counters[channel] = Signal(range(max_outstanding + 1), name=f"{name}_{channel}_open")
        port.withhold(channel, counters[channel] == max_outstanding,
                      f"{max_outstanding} open requests")
    port.check("b", ~port.signal("b", "valid") | ((counters["aw"] != 0) & (counters["w"] != 0)),
               "BVALID without a write whose address and data were both taken")
    port.check("r", ~port.signal("r", "valid") | (counters["ar"] != 0),
               "RVALID without a read taken")
    b_fire, r_fire = port.fire("b"), port.fire("r")
    for channel, answer in (("aw", b_fire), ("w", b_fire), ("ar", r_fire)):
        m.d.sync += counters[channel].eq(counters[channel] + port.fire(channel) - answer)
