"""A memory port passed through a FIFO per direction: the device the stream drivers and
the memory model are tested on."""

from amaranth.hdl import Module, Shape
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from matndp.hw.layouts import MemoryPortSignature, request_layout, response_layout
from matndp.sim.designs.files import design_file


__all__ = ["MemoryPortFIFOs", "memory_port_fifos_verilog"]


class MemoryPortFIFOs(wiring.Component):
    """A memory port passed through one FIFO per direction (requests GPU → memory, read
    responses memory → GPU): the device the stream drivers and the memory model are tested
    on, with a reset, back-pressure and a few entries of buffering."""

    def __init__(self, config, depth=4):
        self.config = config
        self.depth = depth
        super().__init__({
            "gpu": In(MemoryPortSignature(config)),
            "mem": Out(MemoryPortSignature(config)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.requests = requests = SyncFIFOBuffered(
            width=Shape.cast(request_layout(self.config)).width, depth=self.depth)
        m.submodules.responses = responses = SyncFIFOBuffered(
            width=Shape.cast(response_layout(self.config)).width, depth=self.depth)
        for fifo, into, out_of in ((requests, self.gpu.req, self.mem.req),
                                   (responses, self.mem.resp, self.gpu.resp)):
            m.d.comb += [
                fifo.w_data.eq(into.payload),
                fifo.w_en.eq(into.valid),
                into.ready.eq(fifo.w_rdy),
                out_of.payload.eq(fifo.r_data),
                out_of.valid.eq(fifo.r_rdy),
                fifo.r_en.eq(out_of.ready),
            ]
        return m


def memory_port_fifos_verilog(config, depth=4):
    """The exported Verilog file of :class:`MemoryPortFIFOs`."""
    return design_file(MemoryPortFIFOs, "memory_port_fifos", config, depth)
