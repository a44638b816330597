"""An AXI4 burst as the slice's sector requests: one beat after another, each beat's sector
address and the byte lanes it covers (docs/fpga.md, "GPU side").

The data bus is one sector wide, so every beat falls in one sector: a full-width beat is
the whole sector, a narrow one (``AxSIZE`` below the bus width) or the unaligned first beat
of a burst a part of it, given as byte lanes. Beat addresses follow AXI: INCR adds the
transfer size from the aligned address, WRAP wraps at ``beats × size``, FIXED repeats the
first address.

A burst this top does not perform is *refused*: it still yields its ``len + 1`` beats
(so that the write side consumes its data and the read side answers every beat), marked
``refused``, and is answered with SLVERR. Refused: the reserved burst type; a transfer size
wider than the bus; a WRAP burst whose length is not 2, 4, 8 or 16 beats or whose address
is not aligned to its size; a FIXED burst of more than 16 beats.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .axi import LEN_BITS, MAX_FIXED_BEATS, WRAP_BEATS, Burst, address_layout


__all__ = ["PAGE_BITS", "beat_layout", "refused_bit", "refused", "BurstBeats"]


# AXI's 4 KiB page: a legal burst stays inside one (IHI 0022, A3.4.1).
PAGE_BITS = 12


def beat_layout(config, id_width):
    return data.StructLayout({
        "id":      unsigned(id_width),
        "sector":  unsigned(config.addr_width),     # sector-aligned address
        "lanes":   unsigned(config.sector_bytes),   # bytes of the sector the beat covers
        "last":    unsigned(1),
        "refused": unsigned(1),
    })


def refused_bit(config, id_width):
    """The bit index of ``refused`` in a :func:`beat_layout` payload."""
    return beat_layout(config, id_width)["refused"].offset


def _low_mask(size, width):
    """``(1 << size) - 1`` in ``width`` bits, as a decode of ``size`` (no subtractor)."""
    largest = (1 << len(size)) - 1
    return Cat((size > bit) if bit < largest else Const(0, 1) for bit in range(width))


def refused(command, config):
    """Whether the burst ``command`` (an :func:`~.axi.address_layout` view) is refused."""
    size_ok = command.size <= config.offset_bits
    size_mask = _low_mask(command.size, 8)
    wrap_length_ok = 0
    for beats in WRAP_BEATS:
        wrap_length_ok = wrap_length_ok | (command.len == beats - 1)
    wrap_ok = wrap_length_ok & ((command.addr[:8] & size_mask) == 0)
    return (~size_ok |
            (command.burst == 3) |
            ((command.burst == Burst.WRAP.value) & ~wrap_ok) |
            ((command.burst == Burst.FIXED.value) & (command.len >= MAX_FIXED_BEATS)))


class BurstBeats(wiring.Component):
    """``command``: bursts (AW or AR payloads); ``beats``: their beats, one per cycle, in
    order. A burst's command is taken as its last beat leaves (or at once when idle), so
    bursts follow each other without a gap."""

    def __init__(self, config, id_width):
        self.config = config
        self.id_width = id_width
        super().__init__({
            "command": In(stream.Signature(address_layout(config.addr_width, id_width))),
            "beats":   Out(stream.Signature(beat_layout(config, id_width))),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        sector_bytes = config.sector_bytes
        offset_bits = config.offset_bits
        command = self.command.payload
        beats = self.beats

        # The beat's sector: its number within its 4 KiB page and the page. Beats move by
        # at most a sector, so the sector changes by one or not at all, and the page only
        # when the sector number carries out of it; the page's successor is kept ready in
        # a register, so no beat's logic has an adder wider than a page's sector number.
        sector_bits = PAGE_BITS - offset_bits
        in_page = Signal(sector_bits)
        page = Signal(config.addr_width - PAGE_BITS)
        page_after = Signal.like(page)
        # The low bits of the next beat's address (aligned to the transfer size), formed a
        # beat ahead, and whether that beat lies past the end of this beat's sector, so
        # that the next beat's lanes and sector are a decode and an increment of registers.
        coming = Signal(offset_bits)
        crosses = Signal()
        size = Signal(3)
        moves = Signal()                             # not FIXED
        wraps = Signal()
        remaining = Signal(LEN_BITS)
        # The transfer size in bytes, and the low address bits a beat's step may change
        # within the page: a WRAP burst's window, every bit for INCR.
        step = Signal(sector_bytes.bit_length())
        window = Signal(PAGE_BITS)
        refusing = Signal()
        burst_id = Signal(self.id_width)
        busy = Signal()

        def stepped(low, step, window):
            """``low`` moved on by ``step`` inside ``window``, and whether the step left
            the sector."""
            moved = low + step
            low_window = window[:offset_bits]
            return (low & ~low_window) | (moved[:offset_bits] & low_window), moved[offset_bits]

        # Lanes from a beat's address up to the end of its size-aligned transfer: lane j is
        # covered when it is at or above the address and in the same size-aligned block, a
        # function of the address's low bits and the size with no adder in front. They are a
        # register, formed with the address the beat will have, like ``last`` (whether the
        # beat is its burst's last), so that neither is logic in front of the beat's
        # consumer. After the first beat the address is aligned: its whole block is covered.
        def block(low, size):
            return Cat((low >> size) == (Const(lane, offset_bits) >> size)
                       for lane in range(sector_bytes))

        def covered(low, size):
            # (Every address is at or below the last lane: no comparison for it.)
            return block(low, size) & Cat(((low <= lane) if lane < sector_bytes - 1 else 1)
                                          for lane in range(sector_bytes))
        lanes = Signal(sector_bytes)
        last = Signal()

        taken = beats.valid & beats.ready
        finishing = taken & last
        m.d.comb += [
            beats.valid.eq(busy),
            beats.payload.id.eq(burst_id),
            beats.payload.sector.eq(Cat(Const(0, offset_bits), in_page, page)),
            beats.payload.lanes.eq(lanes),
            beats.payload.last.eq(last),
            beats.payload.refused.eq(refusing),
            self.command.ready.eq(~busy | finishing),
        ]
        # The page changes at most once in 4 KiB of a burst, many beats apart (a beat moves
        # at most a sector): its successor, formed a cycle after each change, is ready
        # before the next.
        m.d.sync += page_after.eq(page + 1)
        with m.If(taken):
            m.d.sync += [remaining.eq(remaining - 1), last.eq(remaining == 1)]
            with m.If(moves):
                following, leaves = stepped(coming, step, window)
                m.d.sync += [lanes.eq(block(coming, size)), coming.eq(following),
                             crosses.eq(leaves)]
                with m.If(crosses):
                    sector_window = window[offset_bits:]
                    incremented = in_page + 1
                    m.d.sync += in_page.eq((in_page & ~sector_window) |
                                           (incremented[:sector_bits] & sector_window))
                    # A WRAP burst's window lies inside its page.
                    with m.If(incremented[sector_bits] & ~wraps):
                        m.d.sync += page.eq(page_after)
        with m.If(finishing):
            m.d.sync += busy.eq(0)
        with m.If(self.command.valid & self.command.ready):
            size_bytes = Const(1, sector_bytes.bit_length() + 8) << command.size
            # The burst's bytes less one, ``((len + 1) << size) - 1``, without an adder.
            size_mask = _low_mask(command.size, PAGE_BITS)
            transfer_mask = (command.len << command.size) | size_mask
            command_window = Mux(command.burst == Burst.WRAP.value, transfer_mask,
                                 (1 << PAGE_BITS) - 1)[:PAGE_BITS]
            aligned = command.addr[:offset_bits] & ~size_mask[:offset_bits]
            following, leaves = stepped(aligned, size_bytes[:offset_bits + 1], command_window)
            m.d.sync += [
                busy.eq(1),
                in_page.eq(command.addr[offset_bits:PAGE_BITS]),
                page.eq(command.addr[PAGE_BITS:]),
                page_after.eq(command.addr[PAGE_BITS:] + 1),
                coming.eq(following),
                crosses.eq(leaves),
                lanes.eq(covered(command.addr[:offset_bits], command.size)),
                last.eq(command.len == 0),
                size.eq(command.size),
                step.eq(size_bytes),
                moves.eq(command.burst != Burst.FIXED.value),
                wraps.eq(command.burst == Burst.WRAP.value),
                window.eq(command_window),
                remaining.eq(command.len),
                refusing.eq(refused(command, config)),
                burst_id.eq(command.id),
            ]
        return m
