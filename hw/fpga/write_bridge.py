"""The GPU side's writes: AXI4 write bursts become sector writes of the slice, and each
burst is answered on B once memory has answered all of its sector writes
(docs/fpga.md, "GPU side").

Each beat is one sector write: the beat's data, its byte lanes AND ``WSTRB`` as the mask
(strobes outside the beat's lanes are ignored), the id 0. Beats are counted by ``AWLEN``.
Every GPU write carries the same id toward memory, so memory completes them in order
(AXI's rule for one id), which is what keeps the GPU's writes in their order for
overlapping addresses, and what lets bursts be answered by counting: the burst at the
head of the queue of accepted bursts is answered when as many write completions have
arrived as it has beats. Its response is the first error status among them, else OKAY;
a refused burst's data is consumed and dropped, and it is answered with SLVERR after its
last beat. Bursts are answered in acceptance order, one of the orders AXI allows.
"""

from amaranth.hdl import Module, Mux, Signal, Value, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from ..layouts import ResponseStatus, request_layout
from ..stream import Queue, SkidBuffer, WideStage
from .axi import (LEN_BITS, AXI4Signature, address_layout, drive_channel, take_channel,
                  write_data_layout, write_response_layout)
from .burst import BurstBeats, beat_layout, refused, refused_bit


__all__ = ["write_completion_layout", "AXIWriteBridge"]


def write_completion_layout():
    """Memory's answer to one of the GPU's sector writes."""
    return data.StructLayout({"status": ResponseStatus})


class AXIWriteBridge(wiring.Component):
    """Ports: ``axi`` (AW, W and B, slave side), ``requests`` (sector writes toward the
    slice's GPU port), ``completions`` (memory's answers to them, in order)."""

    def __init__(self, config, axi_config):
        self.config = config
        self.axi_config = axi_config
        axi_config.check(config)
        super().__init__({
            "axi": In(AXI4Signature(addr_width=config.addr_width, data_width=config.data_width,
                                    id_width=axi_config.id_width, halves=("write",))),
            "requests": Out(stream.Signature(request_layout(config))),
            "completions": In(stream.Signature(write_completion_layout())),
        })

    def elaborate(self, platform):
        m = Module()
        config, axi_config = self.config, self.axi_config
        id_width = axi_config.id_width
        bursts = axi_config.write_bursts

        # AW's register also holds whether the burst is refused, decided as it enters, so
        # that the queue of accepted bursts takes its count of writes from flops.
        addresses = address_layout(config.addr_width, id_width)
        m.submodules.aw = aw = SkidBuffer(data.StructLayout({
            "command": addresses, "refused": unsigned(1)}))
        # W's data, the splitter's beats and the sector writes each wait in a stage whose
        # registers load from its own state: the join of a beat with its data, and the
        # requests' consumer (a merge's choice, in the top), then reach no wide enable, the
        # splitter's address logic or the W channel's ``ready``.
        m.submodules.w = w = WideStage(write_data_layout(config.data_width))
        m.submodules.b = b = SkidBuffer(write_response_layout(id_width))
        m.submodules.splitter = splitter = BurstBeats(config, id_width)
        # Whether the head beat is refused decides whether it is taken: a register of its own.
        m.submodules.beats = beats = WideStage(beat_layout(config, id_width),
                                               registered_bits=(refused_bit(config, id_width),))
        connect(m, splitter.beats, beats.i)
        m.submodules.outgoing = outgoing = WideStage(request_layout(config))
        connect(m, outgoing.o, flipped(self.requests))
        requests = outgoing.i
        m.d.comb += [aw.i.valid.eq(self.axi.awvalid), self.axi.awready.eq(aw.i.ready)]
        for name, _ in addresses:
            m.d.comb += Value.cast(aw.i.payload.command[name]).eq(getattr(self.axi, f"aw{name}"))
        m.d.comb += aw.i.payload.refused.eq(refused(aw.i.payload.command, config))
        take_channel(m, self.axi, "w", w.i)
        drive_channel(m, self.axi, "b", b.o)

        # --- accepted bursts, oldest first, waiting for their answers ----------------------
        pending_layout = data.StructLayout({
            "id": unsigned(id_width),
            "writes": unsigned(LEN_BITS + 1),      # sector writes memory will answer
            "refused": unsigned(1),
        })
        # The oldest burst's record is a register (the queue's output register), so that the
        # answer's decision starts at flops rather than at a LUT RAM's read.
        m.submodules.pending = pending = Queue(pending_layout, bursts)
        command = aw.o.payload.command
        m.d.comb += [
            splitter.command.valid.eq(aw.o.valid & pending.i.ready),
            splitter.command.payload.eq(command),
            aw.o.ready.eq(splitter.command.ready & pending.i.ready),
        ]
        entering = pending.i.payload
        burst_refused = aw.o.payload.refused
        m.d.comb += [
            entering.id.eq(command.id),
            entering.writes.eq(Mux(burst_refused, 0, command.len + 1)),
            entering.refused.eq(burst_refused),
            pending.i.valid.eq(aw.o.valid & aw.o.ready),
        ]

        # --- beats joined with their data, toward the slice ----------------------------------
        beat = beats.o.payload
        both = beats.o.valid & w.o.valid
        consumed = both & (beat.refused | requests.ready)
        m.d.comb += [
            requests.valid.eq(both & ~beat.refused),
            requests.payload.addr.eq(beat.sector),
            requests.payload.write.eq(1),
            requests.payload.data.eq(w.o.payload.data),
            requests.payload.mask.eq(beat.lanes & w.o.payload.strb),
            requests.payload.id.eq(0),
            beats.o.ready.eq(consumed),
            w.o.ready.eq(consumed),
        ]
        # Bursts whose last beat has been consumed and that are not answered yet: a burst
        # is never answered before its data is in, refused ones included.
        delivered = Signal(range(bursts + 2))
        data_in = consumed & beat.last

        # --- answers ---------------------------------------------------------------------
        head = pending.o.payload
        answered = Signal(LEN_BITS + 1)
        status = Signal(ResponseStatus)
        counting = pending.o.valid & (answered != head.writes)
        completion = self.completions.payload.status.as_value()
        m.d.comb += self.completions.ready.eq(counting)
        with m.If(self.completions.valid & counting):
            m.d.sync += answered.eq(answered + 1)
            with m.If(~status.as_value()[1] & completion[1]):
                m.d.sync += status.eq(completion)

        done = pending.o.valid & (answered == head.writes) & (delivered != 0)
        respond = b.i.valid & b.i.ready
        m.d.comb += [
            b.i.valid.eq(done),
            b.i.payload.id.eq(head.id),
            b.i.payload.resp.eq(Mux(head.refused, ResponseStatus.SLAVE_ERROR, status)),
            pending.o.ready.eq(respond),
        ]
        with m.If(respond):
            m.d.sync += [answered.eq(0), status.eq(ResponseStatus.OKAY)]
        m.d.sync += delivered.eq(delivered + data_in - respond)
        return m
