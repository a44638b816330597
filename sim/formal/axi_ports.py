"""Formal harnesses around the AXI ports of the FPGA top (docs/fpga.md): each port's adapter
with the AXI rules on its bus (:mod:`.axi`) and the rules of the slice-side interface on
its other side, asserted where the adapter drives and assumed where its environment does.

- :class:`GPUSideHarness`: :class:`~matndp.hw.fpga.slave_port.AXISlavePort`, the ``s_axi``
  slave (read and write bridges, burst splitting, the merge of their sector requests).
  Behind it the slice is assumed to keep its memory port's contract: a read response
  only for a read it took and has not answered (its id), at most one each, never in the
  cycle the read leaves; a write answer only for a write it took and has not answered.
- :class:`MemorySideHarness`: :class:`~matndp.hw.fpga.memory_master.AXIMemoryMaster`, the
  ``m_axi`` master; the slice's requests are assumed to keep the stream rule.
- :class:`RegisterPortHarness`: :class:`~matndp.hw.fpga.csr_bridge.AXILiteCSRBridge`, the
  ``s_axil`` slave; behind it the register bus's target is assumed to acknowledge only an
  access it was given, a cycle or more after its strobe, and the bridge is asserted to keep
  the initiator's side (one strobe at a time, one access until its acknowledgement).

Each harness proves the adapter it is given (by default the shipped one), so a test can
hand it a deliberately broken one.
"""

from amaranth.hdl import Assert, Assume, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import connect, flipped

from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.csr_bridge import AXILiteCSRBridge
from matndp.hw.fpga.memory_master import AXIMemoryMaster
from matndp.hw.fpga.slave_port import AXISlavePort

from .axi import axi4_lite_rules, axi4_rules
from .stream import stream_rules


__all__ = ["GPUSideHarness", "MemorySideHarness", "RegisterPortHarness"]


def _check_adapter(adapter, kind):
    if not isinstance(adapter, kind):
        raise TypeError(f"the adapter must be an {kind.__name__}, not {adapter!r}")
    return adapter


class _Harness(wiring.Component):
    """The adapter's own ports, passed through."""

    def __init__(self, adapter):
        self.adapter = adapter
        super().__init__(dict(adapter.signature.members))

    def _pass_through(self, m):
        m.submodules.adapter = adapter = self.adapter
        for name in self.signature.members:
            connect(m, flipped(getattr(self, name)), getattr(adapter, name))
        return adapter


class GPUSideHarness(_Harness):
    """``config`` (an :class:`~matndp.hw.config.NDPConfig`) and ``axi_config`` size the
    port; bursts of at most ``max_beats`` beats, at most ``max_outstanding`` bursts open
    each way; ``adapter`` replaces the port built from them."""

    def __init__(self, config, axi_config, *, max_beats, max_outstanding, adapter=None):
        if not isinstance(axi_config, AXIConfig):
            raise TypeError(f"axi_config must be an AXIConfig, not {axi_config!r}")
        self.config, self.max_beats, self.max_outstanding = config, max_beats, max_outstanding
        super().__init__(_check_adapter(adapter or AXISlavePort(config, axi_config), AXISlavePort))

    def elaborate(self, platform):
        m = Module()
        adapter = self._pass_through(m)
        axi4_rules(m, self.axi, adapter.axi.signature, design="slave", max_beats=self.max_beats,
                   max_outstanding=self.max_outstanding, name="s_axi")
        request, response, done = self.port.req, self.port.resp, self.write_done
        stream_rules(m, request, "sector request")
        stream_rules(m, response, "read response", rule=Assume)
        stream_rules(m, done, "write answer", rule=Assume)
        # Reads the slice took and has not answered, by id (a register: never answered in
        # the cycle they leave); the port's ids are its ring's slots, unique among them.
        reads = Signal(1 << len(request.payload.id))
        taken = request.valid & request.ready
        issued = Signal.like(reads)
        answered = Signal.like(reads)
        with m.If(taken & ~request.payload.write):
            m.d.comb += issued.eq(1 << request.payload.id)
        with m.If(response.valid & response.ready):
            m.d.comb += answered.eq(1 << response.payload.id)
        m.d.sync += reads.eq((reads & ~answered) | issued)
        m.d.comb += [
            Assert(~(issued & reads).any(), "a sector read's id reused while it is outstanding"),
            Assume(~response.valid | reads.bit_select(response.payload.id, 1),
                   "the slice answers only a read it took and has not answered"),
        ]
        # Writes the slice took and has not answered (one a cycle at most, so the count
        # cannot pass the proof's depth in these bits).
        writes = Signal(8)
        m.d.sync += writes.eq(writes + (taken & request.payload.write) -
                              (done.valid & done.ready))
        m.d.comb += Assume(~done.valid | (writes != 0),
                           "the slice answers only a write it took and has not answered")
        return m


class MemorySideHarness(_Harness):
    """``config`` (an :class:`~matndp.hw.config.NDPConfig`, its ids the memory side's)
    sizes the port; at most ``max_outstanding`` requests open each way; ``adapter``
    replaces the master built from it."""

    def __init__(self, config, *, max_outstanding, adapter=None):
        self.config, self.max_outstanding = config, max_outstanding
        super().__init__(_check_adapter(adapter or AXIMemoryMaster(config), AXIMemoryMaster))

    def elaborate(self, platform):
        m = Module()
        adapter = self._pass_through(m)
        # The master issues single-beat bursts; a bound of one beat lets the checker
        # confirm exactly that.
        axi4_rules(m, self.axi, adapter.axi.signature, design="master", max_beats=1,
                   max_outstanding=self.max_outstanding, name="m_axi")
        stream_rules(m, self.port.req, "sector request", rule=Assume)
        stream_rules(m, self.port.resp, "read response")
        stream_rules(m, self.write_done, "write answer")
        return m


class RegisterPortHarness(_Harness):
    """``register_map`` (a :class:`~matndp.hw.bus.map.RegisterMap`) sizes the port; at
    most ``max_outstanding`` accesses open each way; ``adapter`` replaces the bridge built
    from it."""

    def __init__(self, register_map, *, max_outstanding, adapter=None):
        self.max_outstanding = max_outstanding
        super().__init__(_check_adapter(adapter or AXILiteCSRBridge(register_map),
                                        AXILiteCSRBridge))

    def elaborate(self, platform):
        m = Module()
        adapter = self._pass_through(m)
        axi4_lite_rules(m, self.axil, adapter.axil.signature, design="slave",
                        max_outstanding=self.max_outstanding, name="s_axil")
        bus = self.csr
        # An access from its strobe to its acknowledgement (a register: never acknowledged
        # in the strobe's cycle).
        busy = Signal()
        strobe = bus.r_en | bus.w_en
        with m.If(strobe):
            m.d.sync += busy.eq(1)
        with m.Elif(bus.ack):
            m.d.sync += busy.eq(0)
        m.d.comb += [
            Assert(~(bus.r_en & bus.w_en), "a register read and write strobed together"),
            Assert(~strobe | ~busy, "a register access strobed before the last was acknowledged"),
            Assume(~bus.ack | busy, "the register bus acknowledges only an access it was given"),
        ]
        return m
