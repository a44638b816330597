"""The GPU side's traffic in the SoC: a DMA that writes a tensor from DRAM through the
slice's ``s_axi`` port, or reads one through it, one full-sector beat per AXI4 burst, and
times the slice's answer (migen; LiteX is imported only by the SoC's modules)."""

from migen import If, Signal

from litedram.frontend.dma import LiteDRAMDMAReader
from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStatus, CSRStorage


__all__ = ["SectorDMA"]


class SectorDMA(LiteXModule):
    """Moves ``sectors`` sectors through the slice's GPU side when ``start`` is written:
    with ``read`` clear, copies them from DRAM at ``source`` (a byte offset,
    sector-aligned) to ``address`` (a GPU-side address); with ``read`` set, reads them
    from ``address`` through the slice and drops the data. ``port`` is a LiteDRAM native
    port of the sector's width, ``axi`` the AXI4 master toward the slice's ``s_axi``.

    Every sector is one single-beat INCR burst of the bus's width, id 0 (a write's AW and W
    offered independently); ``done`` rises when every burst is answered (B, or R), and
    ``errors`` counts answers other than OKAY. ``irq`` is the slice's interrupt:
    ``cycles`` counts the cycles from the first burst accepted on AW or AR to the first
    cycle ``irq`` is high afterwards (0 until then), ``transfer_cycles`` those from the
    first burst accepted to the last answer."""

    def __init__(self, port, axi, irq):
        sector_bytes = axi.data_width // 8
        if port.data_width != axi.data_width:
            raise ValueError(f"the DMA's DRAM port ({port.data_width} bits) and its AXI port "
                             f"({axi.data_width} bits) must be one sector wide")
        shift = (sector_bytes - 1).bit_length()
        self.source = CSRStorage(32, description="DRAM byte offset of the first sector (writes)")
        self.address = CSRStorage(32, description="GPU-side address of the first sector")
        self.sectors = CSRStorage(16, description="sectors to move")
        self.read = CSRStorage(1, description="1: read through the slice; 0: write")
        self.start = CSRStorage(1, description="write 1 to start")
        self.done = CSRStatus(1, description="every burst of the transfer answered")
        self.errors = CSRStatus(16, description="answers other than OKAY")
        self.cycles = CSRStatus(32, description="first burst accepted to irq high")
        self.transfer_cycles = CSRStatus(32, description="first burst accepted to last answer")

        # # #

        self.reader = reader = LiteDRAMDMAReader(port)
        busy = Signal()
        started = Signal()
        requested = Signal(16)
        addressed = Signal(16)
        answered = Signal(16)
        irq_seen = Signal()
        clock = Signal(32)
        first_burst = Signal(32)
        sectors = self.sectors.storage
        reading = self.read.storage
        to_address = Signal()
        self.comb += to_address.eq(busy & (addressed != sectors))
        accepted = Signal()
        answer = Signal()
        status = Signal(2)
        beat_address = self.address.storage + (addressed << shift)

        for channel in (axi.aw, axi.ar):
            self.comb += [
                channel.addr.eq(beat_address),
                channel.len.eq(0),
                channel.size.eq(shift),
                channel.burst.eq(0b01),
                channel.cache.eq(0b0011),
                channel.id.eq(0),
            ]
        self.comb += [
            reader.sink.valid.eq(busy & ~reading & (requested != sectors)),
            reader.sink.address.eq((self.source.storage >> shift) + requested),
            axi.aw.valid.eq(to_address & ~reading),
            axi.ar.valid.eq(to_address & reading),
            axi.w.valid.eq(reader.source.valid),
            axi.w.data.eq(reader.source.data),
            axi.w.strb.eq(2 ** sector_bytes - 1),
            axi.w.last.eq(1),
            reader.source.ready.eq(axi.w.ready),
            axi.b.ready.eq(1),
            axi.r.ready.eq(1),
            accepted.eq((axi.aw.valid & axi.aw.ready) | (axi.ar.valid & axi.ar.ready)),
            answer.eq(busy & ((axi.b.valid & ~reading) | (axi.r.valid & reading))),
            If(reading, status.eq(axi.r.resp)).Else(status.eq(axi.b.resp)),
            self.done.status.eq(~busy & started),
        ]
        self.sync += [
            clock.eq(clock + 1),
            If(self.start.re & self.start.storage,
                busy.eq(1), started.eq(1), requested.eq(0), addressed.eq(0), answered.eq(0),
                irq_seen.eq(0), self.errors.status.eq(0), self.cycles.status.eq(0),
                self.transfer_cycles.status.eq(0),
            ).Else(
                If(reader.sink.valid & reader.sink.ready, requested.eq(requested + 1)),
                If(accepted,
                    addressed.eq(addressed + 1),
                    If(addressed == 0, first_burst.eq(clock)),
                ),
                If(answer,
                    answered.eq(answered + 1),
                    If(status != 0, self.errors.status.eq(self.errors.status + 1)),
                    If(answered + 1 == sectors,
                        busy.eq(0),
                        self.transfer_cycles.status.eq(clock - first_burst),
                    ),
                ),
                If(started & (addressed != 0) & irq & ~irq_seen,
                    irq_seen.eq(1),
                    self.cycles.status.eq(clock - first_burst),
                ),
            ),
        ]
