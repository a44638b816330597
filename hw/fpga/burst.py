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


__all__ = ["beat_layout", "refused", "BurstBeats"]


def beat_layout(config, id_width):
    return data.StructLayout({
        "id":      unsigned(id_width),
        "sector":  unsigned(config.addr_width),     # sector-aligned address
        "lanes":   unsigned(config.sector_bytes),   # bytes of the sector the beat covers
        "last":    unsigned(1),
        "refused": unsigned(1),
    })


def refused(command, config):
    """Whether the burst ``command`` (an :func:`~.axi.address_layout` view) is refused."""
    size_ok = command.size <= config.offset_bits
    size_mask = (Const(1, 8) << command.size) - 1
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

        address = Signal(config.addr_width)
        size = Signal(3)
        burst = Signal(2)
        remaining = Signal(LEN_BITS)
        # Address bits a WRAP burst keeps within its window (0 for other bursts).
        wrap_mask = Signal(LEN_BITS + offset_bits + 1)
        refusing = Signal()
        burst_id = Signal(self.id_width)
        busy = Signal()

        size_bytes = Const(1, sector_bytes.bit_length()) << size
        # Masks as wide as the address, so that inverting them keeps its upper bits.
        size_mask = Signal(config.addr_width)
        window_mask = Signal(config.addr_width)
        m.d.comb += [size_mask.eq(size_bytes - 1), window_mask.eq(wrap_mask)]
        aligned = address & ~size_mask
        incremented = (aligned + size_bytes)[:config.addr_width]
        wrapped = (address & ~window_mask) | (incremented & window_mask)
        next_address = Mux(burst == Burst.FIXED.value, address,
                           Mux(burst == Burst.WRAP.value, wrapped, incremented))

        # Lanes from the beat's address up to the end of its size-aligned transfer.
        all_lanes = Const((1 << sector_bytes) - 1, sector_bytes)
        low = address[:offset_bits]
        end = aligned[:offset_bits] + size_bytes              # 1 .. sector_bytes
        unused = Signal(range(sector_bytes))                     # lanes above the end
        m.d.comb += unused.eq(sector_bytes - end)
        lanes = (all_lanes << low)[:sector_bytes] & (all_lanes >> unused)

        taken = beats.valid & beats.ready
        finishing = taken & (remaining == 0)
        m.d.comb += [
            beats.valid.eq(busy),
            beats.payload.id.eq(burst_id),
            beats.payload.sector.eq(Cat(Const(0, offset_bits), address[offset_bits:])),
            beats.payload.lanes.eq(lanes),
            beats.payload.last.eq(remaining == 0),
            beats.payload.refused.eq(refusing),
            self.command.ready.eq(~busy | finishing),
        ]
        with m.If(taken):
            m.d.sync += [address.eq(next_address), remaining.eq(remaining - 1)]
        with m.If(finishing):
            m.d.sync += busy.eq(0)
        with m.If(self.command.valid & self.command.ready):
            transfer = (command.len + 1) << command.size
            m.d.sync += [
                busy.eq(1),
                address.eq(command.addr),
                size.eq(command.size),
                burst.eq(command.burst),
                remaining.eq(command.len),
                wrap_mask.eq(Mux(command.burst == Burst.WRAP.value, transfer - 1, 0)),
                refusing.eq(refused(command, config)),
                burst_id.eq(command.id),
            ]
        return m
