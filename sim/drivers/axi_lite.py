"""The FPGA top's AXI4-Lite register port driven from cocotb, with the interface of
:class:`~matndp.sim.drivers.csr.CSRDriver` (``read`` → (value, error), ``write`` → error), so that the host
runtime programs the top through AXI4-Lite as it does the slice
(:class:`~matndp.sim.drivers.csr_adapter.SimulatedCSRBus`).

Built on cocotbext-axi's channel sources and sinks rather than its ``AxiLiteMaster``,
which aligns every address to the bus width: a test must also be able to send a
misaligned address and a partial strobe. One access at a time; the response code of the
last one is :attr:`last_response`.
"""

import cocotb

from cocotbext.axi import AxiResp
from cocotbext.axi.axil_channels import (AxiLiteARSource, AxiLiteAWSource, AxiLiteBSink,
                                         AxiLiteBus, AxiLiteRSink, AxiLiteWSource)


__all__ = ["AXILiteCSRDriver"]


class AXILiteCSRDriver:
    """``prefix``: the AXI4-Lite ports' name prefix on ``dut``."""

    WORD_BYTES = 4
    ALL_BYTES = 0xF

    def __init__(self, dut, clock, reset, *, prefix="s_axil"):
        bus = AxiLiteBus.from_prefix(dut, prefix)
        self.channels = {
            "aw": AxiLiteAWSource(bus.write.aw, clock, reset),
            "w": AxiLiteWSource(bus.write.w, clock, reset),
            "b": AxiLiteBSink(bus.write.b, clock, reset),
            "ar": AxiLiteARSource(bus.read.ar, clock, reset),
            "r": AxiLiteRSink(bus.read.r, clock, reset),
        }
        self.last_response = None

    def pause_channels(self, generators):
        """Give each channel (``aw``, ``w``, ``b``, ``ar``, ``r``) the pause iterator
        ``generators[name]``."""
        for name, channel in self.channels.items():
            channel.set_pause_generator(generators[name])

    async def read(self, address):
        ar = self.channels["ar"]._transaction_obj()
        ar.araddr = address
        await self.channels["ar"].send(ar)
        r = await self.channels["r"].recv()
        self.last_response = AxiResp(int(r.rresp))
        return int(r.rdata), self.last_response != AxiResp.OKAY

    async def write(self, address, value, strobe=ALL_BYTES):
        aw = self.channels["aw"]._transaction_obj()
        aw.awaddr = address
        w = self.channels["w"]._transaction_obj()
        w.wdata = value
        w.wstrb = strobe
        # Address and data offered together, as an AXI4-Lite master may.
        address_sent = cocotb.start_soon(self.channels["aw"].send(aw))
        await self.channels["w"].send(w)
        await address_sent
        b = await self.channels["b"].recv()
        self.last_response = AxiResp(int(b.bresp))
        return self.last_response != AxiResp.OKAY
