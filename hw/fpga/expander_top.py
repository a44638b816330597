"""The FPGA top of the memory expander: the expander slice between K AXI4 slaves, one per
GPU, and an AXI4 master toward a memory controller, with its registers on an AXI4-Lite
slave (docs/fpga.md, "The expander top"; docs/ndpxnet-rtl.md).

Ports, with AXI's signal names: ``s_axi<k>_*`` for k in 0 … K − 1 (AXI4 slave of GPU k,
ids of :attr:`~.config.AXIConfig.id_width` bits), ``m_axi_*`` (AXI4 master toward memory,
ids of the expander slice's memory ids), ``s_axil_*`` (AXI4-Lite slave, the register map
of :attr:`AXIExpander.slice_config`), ``irq``. One clock, ``clk``; ``rst`` is synchronous
and active high.

Each GPU port is an :class:`~.slave_port.AXISlavePort`, as the single slice's top has, on
one port of the :class:`~matndp.hw.expander.ExpanderSlice`. Memory's answers to writes
return by their id: the top bit names the engine (only counted), the port index the
:class:`~matndp.hw.expander.PortMerge` put above each GPU id names the port whose bursts
they complete. Each port's answers have a place reserved
(:class:`~.write_answers.WriteAnswerBuffer`), so memory's B channel is never refused.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out, connect

from ..arbiter import with_id_width
from ..csr_map import register_map
from ..expander import ExpanderSlice, checked_ports, merged_config, port_index_bits
from .axi import AXI4LiteSignature, AXI4Signature
from .config import checked_configs
from .csr_bridge import AXILiteCSRBridge
from .memory_master import AXIMemoryMaster
from .ports import Prefixed, flat_members, join_flat
from .slave_port import AXISlavePort
from .top import MEMORY_PREFIX, REGISTER_PREFIX
from .write_answers import WriteAnswerBuffer, checked_write_answers


__all__ = ["AXIExpander", "gpu_prefix"]


def gpu_prefix(port):
    """The name prefix of GPU ``port``'s AXI4 slave: ``s_axi<port>_``."""
    return f"s_axi{port}_"


class AXIExpander(wiring.Component):
    """The expander slice of ``config`` (an :class:`~matndp.hw.config.NDPConfig` with an
    engine) shared by ``ports`` GPUs, behind AXI; ``axi_config`` (an :class:`AXIConfig`)
    sizes each GPU port. ``response_depth``: each port's read responses buffered in the
    port merge; ``write_answers``: each port's sector writes in flight toward memory.

    ``slice_config`` is the configuration of the slice inside (the merged id width): the
    one its register map and a runtime driving it are built from."""

    def __init__(self, config, ports=4, axi_config=None, *, response_depth=8, write_answers=32):
        config, axi_config = checked_configs("AXIExpander", config, axi_config)
        if config.engine is None:
            raise ValueError("AXIExpander: an expander slice reduces with its engine: its "
                             "configuration needs one (NDPConfig.engine is None)")
        self.ports, self.response_depth = checked_ports(ports, response_depth)
        self.write_answers = checked_write_answers(write_answers)
        self.config, self.axi_config = config, axi_config
        self.slice_config = merged_config(config, ports)
        self.register_map = register_map(self.slice_config)
        self.gpu_signature = AXI4Signature(addr_width=config.addr_width,
                                           data_width=config.data_width,
                                           id_width=axi_config.id_width)
        self.memory_signature = AXI4Signature(addr_width=config.addr_width,
                                              data_width=config.data_width,
                                              id_width=self.slice_config.mem_id_width)
        self.register_signature = AXI4LiteSignature(addr_width=self.register_map.addr_width)
        members = {}
        for port in range(ports):
            members.update(flat_members(gpu_prefix(port), self.gpu_signature, flip=True))
        members.update({
            **flat_members(MEMORY_PREFIX, self.memory_signature, flip=False),
            **flat_members(REGISTER_PREFIX, self.register_signature, flip=True),
            "irq": Out(1),
        })
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        config, slice_config = self.config, self.slice_config
        m.submodules.expander = expander = ExpanderSlice(config, self.ports,
                                                         response_depth=self.response_depth)
        m.submodules.memory = memory = AXIMemoryMaster(
            with_id_width(slice_config, slice_config.mem_id_width))
        m.submodules.registers = registers = AXILiteCSRBridge(self.register_map)
        join_flat(m, memory.axi, Prefixed(self, MEMORY_PREFIX, self.memory_signature.members))
        join_flat(m, registers.axil, Prefixed(self, REGISTER_PREFIX,
                                              self.register_signature.members))
        connect(m, expander.mem, memory.port)
        connect(m, registers.csr, expander.csr)

        # Memory's answers to writes, by their id: the engine's (source bit set) are only
        # counted; a GPU write's id is 0 below the port index the merge put above it.
        done = memory.write_done
        from_engine = done.payload.id[slice_config.mem_id_width - 1]
        route = done.payload.id[config.id_width:config.id_width + port_index_bits(self.ports)]
        m.d.comb += [
            done.ready.eq(1),           # every GPU write's answer has its place reserved
            expander.mem_write_error.eq(done.valid & done.payload.status.as_value()[1]),
            self.irq.eq(expander.irq),
        ]
        for port in range(self.ports):
            side = AXISlavePort(config, self.axi_config)
            answers = WriteAnswerBuffer(config, self.write_answers)
            m.submodules[f"gpu{port}"] = side
            m.submodules[f"write_answers{port}"] = answers
            join_flat(m, side.axi, Prefixed(self, gpu_prefix(port), self.gpu_signature.members))
            connect(m, side.port, answers.gpu)
            connect(m, answers.mem, expander.gpu[port])
            connect(m, answers.completions, side.write_done)
            m.d.comb += [
                answers.answers.valid.eq(done.valid & ~from_engine & (route == port)),
                answers.answers.payload.status.eq(done.payload.status),
            ]
        return m
