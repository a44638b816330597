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

from amaranth.hdl import Module, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect

from ..arbiter import with_id_width
from ..config import NDPConfig
from ..layouts import request_layout, trigger_event_layout
from ..ndp_slice import NDPSlice
from ..stream import RoundRobinMerge, SkidBuffer
from .axi import AXI4LiteSignature, AXI4Signature
from .config import AXIConfig
from .csr_bridge import AXILiteCSRBridge
from .memory_master import AXIMemoryMaster
from .read_bridge import AXIReadBridge
from .write_bridge import AXIWriteBridge


__all__ = ["AXISlice", "GPU_PREFIX", "MEMORY_PREFIX", "REGISTER_PREFIX", "EVENTS_PREFIX"]


GPU_PREFIX = "s_axi_"
MEMORY_PREFIX = "m_axi_"
REGISTER_PREFIX = "s_axil_"
EVENTS_PREFIX = "events_"


class _Prefixed:
    """The members ``prefix + name`` of a component, by ``name``."""

    def __init__(self, component, prefix, names):
        for name in names:
            setattr(self, name, getattr(component, prefix + name))


def _flat(prefix, signature, *, flip):
    return {prefix + name: member.flip() if flip else member
            for name, member in signature.members.items()}


class AXISlice(wiring.Component):
    """The NDP slice of ``config`` (an :class:`~matndp.hw.config.NDPConfig`) behind AXI;
    ``axi_config`` (an :class:`AXIConfig`) sizes the GPU side."""

    def __init__(self, config, axi_config=None):
        if not isinstance(config, NDPConfig):
            raise TypeError(f"AXISlice: config must be an NDPConfig, not {config!r}")
        axi_config = AXIConfig() if axi_config is None else axi_config
        if not isinstance(axi_config, AXIConfig):
            raise TypeError(f"AXISlice: axi_config must be an AXIConfig, not {axi_config!r}")
        axi_config.check(config)
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
            **_flat(GPU_PREFIX, self.gpu_signature, flip=True),
            **_flat(MEMORY_PREFIX, self.memory_signature, flip=False),
            **_flat(REGISTER_PREFIX, self.register_signature, flip=True),
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
        m.submodules.reads = reads = AXIReadBridge(config, axi_config)
        m.submodules.writes = writes = AXIWriteBridge(config, axi_config)
        m.submodules.requests = requests = RoundRobinMerge(request_layout(config), 2)
        m.submodules.memory = memory = AXIMemoryMaster(with_id_width(config, config.mem_id_width))
        m.submodules.registers = registers = AXILiteCSRBridge(self.register_map)

        gpu = _Prefixed(self, GPU_PREFIX, self.gpu_signature.members)
        self._pass(m, reads.axi, gpu)
        self._pass(m, writes.axi, gpu)
        self._pass(m, memory.axi, _Prefixed(self, MEMORY_PREFIX, self.memory_signature.members))
        self._pass(m, registers.axil, _Prefixed(self, REGISTER_PREFIX,
                                                self.register_signature.members))

        connect(m, reads.requests, requests.i[0])
        connect(m, writes.requests, requests.i[1])
        # The splitters' lane logic and the merge's choice stay out of the cycle in which the
        # slice matches the request against its filter entries (both ways: the slice's
        # ``ready`` does not reach the bridges either).
        m.submodules.request_stage = request_stage = SkidBuffer(request_layout(config))
        connect(m, requests.o, request_stage.i)
        connect(m, request_stage.o, ndp_slice.gpu.req)
        connect(m, ndp_slice.gpu.resp, reads.responses)
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
            writes.completions.valid.eq(done.valid & ~from_engine),
            writes.completions.payload.status.eq(done.payload.status),
            done.ready.eq(from_engine | writes.completions.ready),
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

    @staticmethod
    def _pass(m, inner, outer):
        """Join the interface ``inner`` of a submodule to the top's flat ports ``outer`` (the
        same names): what the submodule drives drives the ports, the rest comes from them."""
        for name, member in inner.signature.members.items():
            if member.flow == Out:
                m.d.comb += getattr(outer, name).eq(Value.cast(getattr(inner, name)))
            else:
                m.d.comb += getattr(inner, name).eq(getattr(outer, name))
