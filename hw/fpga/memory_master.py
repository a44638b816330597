"""The memory side: the slice's memory port as an AXI4 master (docs/fpga.md, "Memory
side").

One request is one single-beat transfer of one sector: a read an AR (``ARLEN`` 0, the
full bus size, INCR), a write an AW and its W beat (``WSTRB`` the request's mask), each
with the request's id and ``AxCACHE`` :data:`~.axi.MEMORY_CACHE`. R beats become the
slice's read responses with ``RRESP`` as their status; B responses leave on
``write_done`` with their id and ``BRESP``. Requests enter through a
:class:`~matndp.hw.stream.WideStage` and every channel passes one register in each
direction (:class:`~matndp.hw.stream.SkidBuffer`), so the AXI outputs are registered and
no ``ready`` reaches the slice through logic.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from ..layouts import MemoryPortSignature, ResponseStatus
from ..stream import SkidBuffer, WideStage
from .axi import (MEMORY_CACHE, AXI4Signature, Burst, address_layout, drive_channel,
                  read_data_layout, take_channel, write_data_layout, write_response_layout)


__all__ = ["write_done_layout", "AXIMemoryMaster"]


def write_done_layout(id_width):
    return data.StructLayout({"id": id_width, "status": ResponseStatus})


class AXIMemoryMaster(wiring.Component):
    """Ports: ``port`` (the slice's memory port, target side; ``config`` gives its widths,
    its ids included), ``axi`` (master), ``write_done`` (memory's answers to writes)."""

    def __init__(self, config):
        self.config = config
        super().__init__({
            "port": In(MemoryPortSignature(config)),
            "axi": Out(AXI4Signature(addr_width=config.addr_width, data_width=config.data_width,
                                     id_width=config.id_width)),
            "write_done": Out(stream.Signature(write_done_layout(config.id_width))),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        addresses = address_layout(config.addr_width, config.id_width)
        fanout = WideStage.SELECT_FANOUT
        m.submodules.ar = ar = SkidBuffer(addresses, select_fanout=fanout)
        m.submodules.aw = aw = SkidBuffer(addresses, select_fanout=fanout)
        m.submodules.w = w = SkidBuffer(write_data_layout(config.data_width), select_fanout=fanout)
        m.submodules.r = r = SkidBuffer(read_data_layout(config.data_width, config.id_width),
                                        select_fanout=fanout)
        m.submodules.b = b = SkidBuffer(write_response_layout(config.id_width))
        # The slice's requests wait in a stage of their own: whether the channels take a
        # request (which depends on whether it is a write) is then not in the cycle of the
        # slice's choice of its next request. Its ``ready`` is a register of its own, placed
        # beside the slice's request side, whose choice of the next request it reaches.
        # Whether the head is a write (which decides the channels it waits for) is a
        # register of its own.
        requests = self.port.req.payload.shape()
        m.submodules.incoming = incoming = WideStage(
            requests, separate_ready=True, registered_bits=(requests["write"].offset,))
        connect(m, flipped(self.port.req), incoming.i)
        for channel, stage in (("ar", ar), ("aw", aw), ("w", w)):
            drive_channel(m, self.axi, channel, stage.o)
        for channel, stage in (("r", r), ("b", b)):
            take_channel(m, self.axi, channel, stage.i)

        request = incoming.o
        payload = request.payload
        for stage in (ar, aw):
            m.d.comb += [
                stage.i.payload.id.eq(payload.id),
                stage.i.payload.addr.eq(payload.addr),
                stage.i.payload.len.eq(0),
                stage.i.payload.size.eq(config.offset_bits),
                stage.i.payload.burst.eq(Burst.INCR.value),
                stage.i.payload.cache.eq(MEMORY_CACHE),
            ]
        m.d.comb += [
            w.i.payload.data.eq(payload.data),
            w.i.payload.strb.eq(payload.mask),
            w.i.payload.last.eq(1),
        ]
        # A write leaves once both its AW and its W are taken, in one cycle or in two.
        aw_sent = Signal()
        w_sent = Signal()
        write = payload.write
        aw_done = aw_sent | aw.i.ready
        w_done = w_sent | w.i.ready
        m.d.comb += [
            ar.i.valid.eq(request.valid & ~write),
            aw.i.valid.eq(request.valid & write & ~aw_sent),
            w.i.valid.eq(request.valid & write & ~w_sent),
            request.ready.eq(((aw_done & w_done) & write) | (ar.i.ready & ~write)),
        ]
        with m.If(request.valid & request.ready):
            m.d.sync += [aw_sent.eq(0), w_sent.eq(0)]
        with m.Elif(request.valid & write):
            m.d.sync += [aw_sent.eq(aw_done), w_sent.eq(w_done)]

        m.d.comb += [
            self.port.resp.valid.eq(r.o.valid),
            self.port.resp.payload.data.eq(r.o.payload.data),
            self.port.resp.payload.id.eq(r.o.payload.id),
            self.port.resp.payload.status.eq(r.o.payload.resp),
            r.o.ready.eq(self.port.resp.ready),
            self.write_done.valid.eq(b.o.valid),
            self.write_done.payload.id.eq(b.o.payload.id),
            self.write_done.payload.status.eq(b.o.payload.resp),
            b.o.ready.eq(self.write_done.ready),
        ]
        return m
