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
from ..stream import PingPongBuffer, SkidBuffer
from .axi import AXI4Signature, address_layout, drive_channel, read_data_layout, take_channel
from .burst import BurstBeats


__all__ = ["AXIReadBridge"]


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
        m.submodules.r = r = SkidBuffer(read_data_layout(config.data_width, id_width))
        m.submodules.beats = splitter = BurstBeats(config, id_width)
        # Between the ring and the requests' consumer, so that the consumer's ``ready``
        # (a merge's choice, in the top) does not reach the ring, the splitter and their
        # registers' enables.
        m.submodules.outgoing = outgoing = PingPongBuffer(request_layout(config))
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

        beat_meta = data.StructLayout({"id": unsigned(id_width), "last": unsigned(1),
                                       "refused": unsigned(1)})
        m.submodules.meta = meta = Memory(shape=beat_meta, depth=slots, init=[])
        meta_write = meta.write_port()
        meta_read = meta.read_port(domain="comb")
        sector_layout = data.StructLayout({"data": unsigned(config.data_width),
                                           "status": ResponseStatus})
        m.submodules.sectors = sectors = Memory(shape=sector_layout, depth=slots, init=[])
        sector_write = sectors.write_port()
        sector_read = sectors.read_port(domain="comb")

        # --- beats into slots, reads toward the slice ---------------------------------------
        beat = splitter.beats.payload
        allocate = splitter.beats.valid & ~full & (beat.refused | requests.ready)
        m.d.comb += [
            requests.valid.eq(splitter.beats.valid & ~full & ~beat.refused),
            requests.payload.addr.eq(beat.sector),
            requests.payload.write.eq(0),
            requests.payload.mask.eq(beat.lanes),
            requests.payload.id.eq(tail[:slot_bits]),
            splitter.beats.ready.eq(~full & (beat.refused | requests.ready)),
            meta_write.addr.eq(tail[:slot_bits]),
            meta_write.data.id.eq(beat.id),
            meta_write.data.last.eq(beat.last),
            meta_write.data.refused.eq(beat.refused),
            meta_write.en.eq(allocate),
        ]

        # --- sectors back into their slots ---------------------------------------------------
        response = self.responses.payload
        m.d.comb += [
            self.responses.ready.eq(1),
            sector_write.addr.eq(response.id[:slot_bits]),
            sector_write.data.data.eq(response.data),
            sector_write.data.status.eq(response.status),
            sector_write.en.eq(self.responses.valid),
        ]

        # --- the oldest slot onto R ----------------------------------------------------------
        m.d.comb += [
            meta_read.addr.eq(head[:slot_bits]),
            sector_read.addr.eq(head[:slot_bits]),
        ]
        refused_beat = meta_read.data.refused
        leave = r.i.valid & r.i.ready
        m.d.comb += [
            r.i.valid.eq(filled.bit_select(head[:slot_bits], 1)),
            r.i.payload.id.eq(meta_read.data.id),
            r.i.payload.last.eq(meta_read.data.last),
            r.i.payload.data.eq(Mux(refused_beat, 0, sector_read.data.data)),
            r.i.payload.resp.eq(Mux(refused_beat, ResponseStatus.SLAVE_ERROR,
                                    sector_read.data.status)),
        ]
        next_head = Signal.like(head)
        next_tail = Signal.like(tail)
        m.d.comb += [next_head.eq(head + leave), next_tail.eq(tail + allocate)]
        m.d.sync += [head.eq(next_head), tail.eq(next_tail)]
        m.d.sync += full.eq((next_head[:slot_bits] == next_tail[:slot_bits]) &
                            (next_head[slot_bits] != next_tail[slot_bits]))

        # Plain expressions rather than assignments under conditions: each is then defined
        # from the first instant in every simulator, whether or not its inputs ever change.
        one = Const(1, slots)
        set_bits = Mux(self.responses.valid, one << response.id[:slot_bits], 0)
        refused_bit = Mux(allocate & beat.refused, one << tail[:slot_bits], 0)
        clear_bits = Mux(leave, one << head[:slot_bits], 0)
        m.d.sync += filled.eq((filled & ~clear_bits[:slots]) | set_bits[:slots] | refused_bit[:slots])
        return m
