"""An AXI4 slave as one sector-level memory port: the GPU side of the FPGA tops
(docs/fpga.md, "GPU side").

Read bursts pass :class:`~.read_bridge.AXIReadBridge` (a slot of the reorder ring per beat,
R in acceptance order), write bursts :class:`~.write_bridge.AXIWriteBridge` (one sector
write per beat, B once memory has answered every beat); their sector requests are merged
round robin (the choice a register, made a cycle ahead) and leave through a
:class:`~matndp.hw.stream.SkidBuffer` with copies of its state per group of bits, so that
the bridges' lane logic and the merge's choice stay out of the cycle in which the slice
behind takes the request, the request leaves from registers, and the slice's ``ready``
reaches neither the bridges nor one wide enable.

The memory port carries no write answers; memory's answers to this port's writes come
back on ``write_done``, in the order of the writes.
"""

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from ..layouts import MemoryPortSignature, request_layout
from ..stream import RoundRobinMerge, SkidBuffer, WideStage
from .axi import AXI4Signature
from .config import AXIConfig
from .ports import join_flat
from .read_bridge import AXIReadBridge
from .write_bridge import AXIWriteBridge, write_completion_layout


__all__ = ["AXISlavePort"]


class AXISlavePort(wiring.Component):
    """Ports: ``axi`` (AXI4 slave, ids of ``axi_config.id_width`` bits), ``port`` (memory
    port initiator with the widths of ``config``, an
    :class:`~matndp.hw.config.NDPConfig`: reads carry their ring slot as id, writes id 0),
    ``write_done`` (memory's answers to the port's writes, in order)."""

    def __init__(self, config, axi_config):
        if not isinstance(axi_config, AXIConfig):
            raise TypeError(f"axi_config must be an AXIConfig, not {axi_config!r}")
        axi_config.check(config)
        self.config = config
        self.axi_config = axi_config
        super().__init__({
            "axi": In(AXI4Signature(addr_width=config.addr_width, data_width=config.data_width,
                                    id_width=axi_config.id_width)),
            "port": Out(MemoryPortSignature(config)),
            "write_done": In(stream.Signature(write_completion_layout())),
        })

    def elaborate(self, platform):
        m = Module()
        config, axi_config = self.config, self.axi_config
        m.submodules.reads = reads = AXIReadBridge(config, axi_config)
        m.submodules.writes = writes = AXIWriteBridge(config, axi_config)
        m.submodules.requests = requests = RoundRobinMerge(
            request_layout(config), 2, registered_choice=True, select_fanout=WideStage.SELECT_FANOUT)
        # A skid buffer (its state copied per group of bits): the slice copies the address
        # it takes for each of its filter entries, so the request leaves from registers.
        m.submodules.request_stage = request_stage = SkidBuffer(
            request_layout(config), select_fanout=WideStage.SELECT_FANOUT)
        join_flat(m, reads.axi, self.axi)
        join_flat(m, writes.axi, self.axi)
        connect(m, reads.requests, requests.i[0])
        connect(m, writes.requests, requests.i[1])
        connect(m, requests.o, request_stage.i)
        connect(m, request_stage.o, flipped(self.port.req))
        connect(m, flipped(self.port.resp), reads.responses)
        connect(m, flipped(self.write_done), writes.completions)
        return m
