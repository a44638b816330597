"""The GPU side's traffic in the SoC: a DMA that reads a tensor from DRAM and writes it,
one full-sector beat per AXI4 write, to the slice's ``s_axi`` port, and times the slice's
answer (migen; LiteX is imported only by the SoC's modules)."""

from migen import If, Module, Signal

from litedram.frontend.dma import LiteDRAMDMAReader
from litex.soc.interconnect.csr import AutoCSR, CSRStatus, CSRStorage


__all__ = ["SectorWriteDMA"]


class SectorWriteDMA(Module, AutoCSR):
    """Copies ``sectors`` sectors from DRAM at ``source`` (a byte offset, sector-aligned)
    to ``destination`` (an address of the slice's GPU side) when ``start`` is written;
    ``port`` is a LiteDRAM native port of the sector's width, ``axi`` the AXI4 master
    toward the slice's ``s_axi``.

    Every sector is one single-beat INCR write (AW and W offered independently, id 0);
    ``done`` rises when every write is answered on B, ``errors`` counts answers other than
    OKAY. ``irq`` is the slice's interrupt: ``cycles`` is the number of cycles from the
    first write accepted on AW to the first cycle ``irq`` is high afterwards (0 until then),
    ``transfer_cycles`` those from the first AW to the last B."""

    def __init__(self, port, axi, irq):
        sector_bytes = axi.data_width // 8
        if port.data_width != axi.data_width:
            raise ValueError(f"the DMA's DRAM port ({port.data_width} bits) and its AXI port "
                             f"({axi.data_width} bits) must be one sector wide")
        shift = (sector_bytes - 1).bit_length()
        self.source = CSRStorage(32, description="DRAM byte offset of the first sector")
        self.destination = CSRStorage(32, description="GPU-side address of the first sector")
        self.sectors = CSRStorage(16, description="sectors to copy")
        self.start = CSRStorage(1, description="write 1 to start a copy")
        self.done = CSRStatus(1, description="every write of the copy answered")
        self.errors = CSRStatus(16, description="write answers other than OKAY")
        self.cycles = CSRStatus(32, description="first AW accepted to irq high")
        self.transfer_cycles = CSRStatus(32, description="first AW accepted to last B")

        # # #

        self.reader = reader = LiteDRAMDMAReader(port)
        busy = Signal()
        requested = Signal(16)
        addressed = Signal(16)
        answered = Signal(16)
        started = Signal()
        irq_seen = Signal()
        clock = Signal(32)
        first_write = Signal(32)
        sectors = self.sectors.storage

        self.sync += clock.eq(clock + 1)
        self.comb += [
            reader.sink.valid.eq(busy & (requested != sectors)),
            reader.sink.address.eq((self.source.storage >> shift) + requested),
            axi.aw.valid.eq(busy & (addressed != sectors)),
            axi.aw.addr.eq(self.destination.storage + (addressed << shift)),
            axi.aw.len.eq(0),
            axi.aw.size.eq(shift),
            axi.aw.burst.eq(0b01),
            axi.aw.cache.eq(0b0011),
            axi.aw.id.eq(0),
            axi.w.valid.eq(reader.source.valid),
            axi.w.data.eq(reader.source.data),
            axi.w.strb.eq(2 ** sector_bytes - 1),
            axi.w.last.eq(1),
            reader.source.ready.eq(axi.w.ready),
            axi.b.ready.eq(1),
            axi.ar.valid.eq(0),
            axi.r.ready.eq(1),
            self.done.status.eq(~busy & started),
        ]
        self.sync += [
            If(self.start.re & self.start.storage,
                busy.eq(1), started.eq(1), requested.eq(0), addressed.eq(0), answered.eq(0),
                irq_seen.eq(0), self.errors.status.eq(0), self.cycles.status.eq(0),
                self.transfer_cycles.status.eq(0),
            ).Else(
                If(reader.sink.valid & reader.sink.ready, requested.eq(requested + 1)),
                If(axi.aw.valid & axi.aw.ready,
                    addressed.eq(addressed + 1),
                    If(addressed == 0, first_write.eq(clock)),
                ),
                If(axi.b.valid & busy,
                    answered.eq(answered + 1),
                    If(axi.b.resp != 0, self.errors.status.eq(self.errors.status + 1)),
                    If(answered + 1 == sectors,
                        busy.eq(0),
                        self.transfer_cycles.status.eq(clock - first_write),
                    ),
                ),
                If(started & (addressed != 0) & irq & ~irq_seen,
                    irq_seen.eq(1),
                    self.cycles.status.eq(clock - first_write),
                ),
            ),
        ]
