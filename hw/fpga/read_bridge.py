"""The GPU side's reads: AXI4 read bursts become sector reads of the slice, and the
sectors that come back, in whatever order memory returns them, leave on R in the order
the bursts were accepted (docs/fpga.md, "GPU side").

Every beat takes a *slot* of a ring of :attr:`~.config.AXIConfig.read_slots`; the slot's
index is the read's id toward the slice, so ids are unique among outstanding reads as the
trigger requires. A slot is filled when its sector returns (with memory's status) and
freed when its beat leaves on R, oldest first. Answering every burst in acceptance order
is one of the orders AXI allows (the same id in order; different ids in any order). A
refused burst's beats take slots too, already filled, and leave with SLVERR and zero data.
"""

from amaranth.hdl import Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out, connect, flipped

from ..layouts import ResponseStatus, request_layout, response_layout
from ..stream import SkidBuffer, WideStage
from .axi import AXI4Signature, address_layout, drive_channel, read_data_layout, take_channel
from .burst import BurstBeats, beat_layout, refused_bit


__all__ = ["AXIReadBridge"]


#: Columns of the sector memory behind one copy of its read and write slots.
BANK_BITS = 32


class AXIReadBridge(wiring.Component):
    """Ports: ``axi`` (the AR and R channels, slave side), ``requests`` (sector reads toward
    the slice's GPU port), ``responses`` (the slice's read responses; always taken)."""

    def __init__(self, config, axi_config):
        self.config = config
        self.axi_config = axi_config
        axi_config.check(config)
        super().__init__({
            "axi": In(AXI4Signature(addr_width=config.addr_width, data_width=config.data_width,
                                    id_width=axi_config.id_width, halves=("read",))),
            "requests": Out(stream.Signature(request_layout(config))),
            "responses": In(stream.Signature(response_layout(config))),
        })

    def elaborate(self, platform):
        m = Module()
        config, axi_config = self.config, self.axi_config
        slots, slot_bits = axi_config.read_slots, axi_config.slot_bits
        id_width = axi_config.id_width

        m.submodules.ar = ar = SkidBuffer(address_layout(config.addr_width, id_width))
        m.submodules.r = r = SkidBuffer(read_data_layout(config.data_width, id_width),
                                        select_fanout=BANK_BITS)
        m.submodules.splitter = splitter = BurstBeats(config, id_width)
        # The beats wait in a stage of their own, so that whether the ring takes a beat (its
        # room, the requests' consumer) does not reach the splitter's address logic.
        # Whether the head beat is refused decides whether it is taken: a register of its own.
        m.submodules.beats = beats = WideStage(beat_layout(config, id_width),
                                               registered_bits=(refused_bit(config, id_width),))
        connect(m, splitter.beats, beats.i)
        # Between the ring and the requests' consumer, so that the consumer's ``ready``
        # (a merge's choice, in the top) does not reach the ring, the splitter and their
        # registers' enables.
        m.submodules.outgoing = outgoing = WideStage(request_layout(config))
        connect(m, outgoing.o, flipped(self.requests))
        requests = outgoing.i
        take_channel(m, self.axi, "ar", ar.i)
        connect(m, ar.o, splitter.command)
        drive_channel(m, self.axi, "r", r.o)

        # The ring: beats are given slots at ``tail`` and leave from ``head`` (one more bit
        # than a slot index, so that a full ring differs from an empty one).
        head = Signal(slot_bits + 1)
        tail = Signal(slot_bits + 1)
        # Whether every slot is given, a register formed from the pointers the ring is about
        # to have: the splitter's ``ready`` and the request's ``valid`` then start at a flop,
        # not at a comparison of both pointers.
        full = Signal()
        filled = Signal(slots)

        beat_meta = data.StructLayout({"id": unsigned(id_width), "last": unsigned(1)})
        m.submodules.meta = meta = Memory(shape=beat_meta, depth=slots, init=[])
        meta_write = meta.write_port()
        meta_read = meta.read_port(domain="comb")

        # --- beats into slots, reads toward the slice ---------------------------------------
        beat = beats.o.payload
        allocate = beats.o.valid & ~full & (beat.refused | requests.ready)
        m.d.comb += [
            requests.valid.eq(beats.o.valid & ~full & ~beat.refused),
            requests.payload.addr.eq(beat.sector),
            requests.payload.write.eq(0),
            requests.payload.mask.eq(beat.lanes),
            requests.payload.id.eq(tail[:slot_bits]),
            beats.o.ready.eq(~full & (beat.refused | requests.ready)),
            meta_write.addr.eq(tail[:slot_bits]),
            meta_write.data.id.eq(beat.id),
            meta_write.data.last.eq(beat.last),
            meta_write.en.eq(allocate),
        ]

        # --- sectors back into their slots, a cycle after they arrive -----------------------
        # From registers: the slice's response handshake reaches neither the slots' memory
        # nor their filled bits.
        response = self.responses.payload
        arrived = Signal()
        arrived_slot = Signal(slot_bits, reset_less=True)
        m.d.comb += self.responses.ready.eq(1)
        m.d.sync += [arrived.eq(self.responses.valid), arrived_slot.eq(response.id[:slot_bits])]

        # --- the oldest slot onto R ----------------------------------------------------------
        # The sectors (data and status) are kept in banks of BANK_BITS columns, each with its
        # own copies of the slot being written and of the slot at the head (marked
        # ``keep``), so that neither pointer is one net to every memory cell of the ring. A
        # refused beat's slot is marked in each bank too, and leaves as zero data with
        # SLVERR.
        # Whether the head's slot is filled, and the slot after the head, are registers
        # formed a cycle ahead, so that a beat's leaving and the head's next position start
        # at flops rather than after a selection among the slots and an adder.
        head_filled = Signal()
        head_plus_one = Signal.like(head, init=1)
        leave = r.i.valid & r.i.ready
        next_head = Signal.like(head)
        next_tail = Signal.like(tail)
        m.d.comb += [next_head.eq(Mux(leave, head_plus_one, head)), next_tail.eq(tail + allocate)]
        m.d.sync += [head.eq(next_head), tail.eq(next_tail),
                     head_plus_one.eq(Mux(leave, head_plus_one + 1, head_plus_one))]
        m.d.sync += full.eq((next_head[:slot_bits] == next_tail[:slot_bits]) &
                            (next_head[slot_bits] != next_tail[slot_bits]))
        m.d.comb += meta_read.addr.eq(head[:slot_bits])

        sector = Signal(data.StructLayout({"data": unsigned(config.data_width),
                                           "status": ResponseStatus}))
        arrived_sector = Signal.like(sector, reset_less=True)
        m.d.sync += [arrived_sector.data.eq(response.data),
                     arrived_sector.status.eq(response.status)]
        width = len(sector.as_value())
        for bank, lsb in enumerate(range(0, width, BANK_BITS)):
            bits = slice(lsb, lsb + BANK_BITS)
            bank_width = len(sector.as_value()[bits])
            written_slot = Signal(slot_bits, name=f"written_slot{bank}", reset_less=True,
                                  attrs={"keep": 1})
            head_slot = Signal(slot_bits, name=f"head_slot{bank}", attrs={"keep": 1})
            m.d.sync += [written_slot.eq(response.id[:slot_bits]),
                         head_slot.eq(next_head[:slot_bits])]
            sectors = Memory(shape=unsigned(bank_width), depth=slots, init=[])
            refusals = Memory(shape=unsigned(1), depth=slots, init=[])
            m.submodules[f"sectors{bank}"] = sectors
            m.submodules[f"refusals{bank}"] = refusals
            sector_write, sector_read = sectors.write_port(), sectors.read_port(domain="comb")
            refusal_write, refusal_read = refusals.write_port(), refusals.read_port(domain="comb")
            m.d.comb += [
                sector_write.addr.eq(written_slot),
                sector_write.data.eq(arrived_sector.as_value()[bits]),
                sector_write.en.eq(arrived),
                sector_read.addr.eq(head_slot),
                refusal_write.addr.eq(tail[:slot_bits]),
                refusal_write.data.eq(beat.refused),
                refusal_write.en.eq(allocate),
                refusal_read.addr.eq(head_slot),
                sector.as_value()[bits].eq(Mux(refusal_read.data, 0, sector_read.data)),
            ]
        refused_beat = Signal()
        m.d.comb += refused_beat.eq(refusal_read.data)
        m.d.comb += [
            r.i.valid.eq(head_filled),
            r.i.payload.id.eq(meta_read.data.id),
            r.i.payload.last.eq(meta_read.data.last),
            r.i.payload.data.eq(sector.data),
            r.i.payload.resp.eq(Mux(refused_beat, ResponseStatus.SLAVE_ERROR, sector.status)),
        ]

        # Plain expressions rather than assignments under conditions: each is then defined
        # from the first instant in every simulator, whether or not its inputs ever change.
        one = Const(1, slots)
        set_bits = Mux(arrived, one << arrived_slot, 0)
        refused_slot = Mux(allocate & beat.refused, one << tail[:slot_bits], 0)
        clear_bits = Mux(leave, one << head[:slot_bits], 0)
        m.d.sync += filled.eq((filled & ~clear_bits[:slots]) | set_bits[:slots] | refused_slot[:slots])
        # Whether the next head's slot will be filled, from registers alone: its bit, or a
        # sector arriving in it now. A leaving beat frees the head's slot only, and the next
        # head is another slot. A refused beat given the next head's slot now is seen a
        # cycle later, from its bit.
        def filled_after(slot):
            return filled.bit_select(slot, 1) | (arrived & (arrived_slot == slot))
        m.d.sync += head_filled.eq(Mux(leave, filled_after(head_plus_one[:slot_bits]),
                                       filled_after(head[:slot_bits])))
        return m
