"""The FPGA top: an NDP slice between an AXI4 slave toward the GPU (or an interconnect)
and an AXI4 master toward a memory controller, with its registers on an AXI4-Lite slave
(docs/fpga.md).

Ports, with AXI's signal names: ``s_axi_*`` (AXI4 slave, the GPU side, ids of
:attr:`~.config.AXIConfig.id_width` bits), ``m_axi_*`` (AXI4 master, toward memory, ids of
the slice's :attr:`~matndp.hw.config.NDPConfig.mem_id_width` bits), ``s_axil_*``
(AXI4-Lite slave, the register map), ``irq``; in a slice of the trigger alone also
``events_*`` (the trigger's event stream: ``events_valid``, ``events_ready`` and one
port per event field). One clock, ``clk``; ``rst`` is synchronous and active high.

Memory's answers to writes come back to the GPU side directly (the slice's memory port has
no write responses); those of the GPU's writes complete its bursts, an engine's are only
counted. Every refused write pulses the slice's ``mem_write_error``.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect

from ..arbiter import with_id_width
from ..layouts import trigger_event_layout
from ..ndp_slice import NDPSlice
from .axi import AXI4LiteSignature, AXI4Signature
from .config import checked_configs
from .csr_bridge import AXILiteCSRBridge
from .memory_master import AXIMemoryMaster
from .ports import Prefixed, flat_members, join_flat
from .slave_port import AXISlavePort


__all__ = ["AXISlice", "GPU_PREFIX", "MEMORY_PREFIX", "REGISTER_PREFIX", "EVENTS_PREFIX"]


GPU_PREFIX = "s_axi_"
MEMORY_PREFIX = "m_axi_"
REGISTER_PREFIX = "s_axil_"
EVENTS_PREFIX = "events_"


class AXISlice(wiring.Component):
    """The NDP slice of ``config`` (an :class:`~matndp.hw.config.NDPConfig`) behind AXI;
    ``axi_config`` (an :class:`AXIConfig`) sizes the GPU side."""

    def __init__(self, config, axi_config=None):
        config, axi_config = checked_configs("AXISlice", config, axi_config)
        self.config = config
        self.axi_config = axi_config
        self.slice = NDPSlice(config)
        self.register_map = self.slice.register_map
        self.gpu_signature = AXI4Signature(addr_width=config.addr_width,
                                           data_width=config.data_width,
                                           id_width=axi_config.id_width)
        self.memory_signature = AXI4Signature(addr_width=config.addr_width,
                                              data_width=config.data_width,
                                              id_width=config.mem_id_width)
        self.register_signature = AXI4LiteSignature(addr_width=self.register_map.addr_width)
        members = {
            **flat_members(GPU_PREFIX, self.gpu_signature, flip=True),
            **flat_members(MEMORY_PREFIX, self.memory_signature, flip=False),
            **flat_members(REGISTER_PREFIX, self.register_signature, flip=True),
            "irq": Out(1),
        }
        if config.engine is None:
            members[f"{EVENTS_PREFIX}valid"] = Out(1)
            members[f"{EVENTS_PREFIX}ready"] = In(1)
            for name, field in trigger_event_layout(config):
                members[f"{EVENTS_PREFIX}{name}"] = Out(field.shape)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        config, axi_config = self.config, self.axi_config
        m.submodules.slice = ndp_slice = self.slice
        m.submodules.gpu_side = gpu_side = AXISlavePort(config, axi_config)
        m.submodules.memory = memory = AXIMemoryMaster(with_id_width(config, config.mem_id_width))
        m.submodules.registers = registers = AXILiteCSRBridge(self.register_map)

        join_flat(m, gpu_side.axi, Prefixed(self, GPU_PREFIX, self.gpu_signature.members))
        join_flat(m, memory.axi, Prefixed(self, MEMORY_PREFIX, self.memory_signature.members))
        join_flat(m, registers.axil, Prefixed(self, REGISTER_PREFIX,
                                              self.register_signature.members))
        connect(m, gpu_side.port, ndp_slice.gpu)
        connect(m, ndp_slice.mem, memory.port)
        connect(m, registers.csr, ndp_slice.csr)

        # Memory's answers to writes: the GPU's complete its bursts, the engine's (source
        # bit set) are only counted; a refused one of either is counted by the slice.
        done = memory.write_done
        if config.engine is None:
            from_engine = 0
        else:
            from_engine = done.payload.id[config.mem_id_width - 1]
        m.d.comb += [
            gpu_side.write_done.valid.eq(done.valid & ~from_engine),
            gpu_side.write_done.payload.status.eq(done.payload.status),
            done.ready.eq(from_engine | gpu_side.write_done.ready),
            ndp_slice.mem_write_error.eq(done.valid & done.ready &
                                         done.payload.status.as_value()[1]),
            self.irq.eq(ndp_slice.irq),
        ]

        if config.engine is None:
            events = ndp_slice.events
            m.d.comb += [
                getattr(self, f"{EVENTS_PREFIX}valid").eq(events.valid),
                events.ready.eq(getattr(self, f"{EVENTS_PREFIX}ready")),
            ]
            for name, _ in trigger_event_layout(config):
                m.d.comb += getattr(self, f"{EVENTS_PREFIX}{name}").eq(events.payload[name])
        return m
