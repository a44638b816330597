# amaranth: UnusedElaboratable=no
# (Amaranth's linter option: a harness whose constructor refuses its arguments still exists
# and would be reported as never elaborated. Every harness these tests build is proven.)
"""Bounded proofs that the FPGA top's AXI ports keep the AXI rules (sim/formal/axi_ports.py),
proofs that fail on mutated ports, and witnesses that each depth reaches a full burst and
back-pressure from the port."""

import pytest
from amaranth.hdl import Assert, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import connect, flipped

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.csr_map import register_map
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.csr_bridge import AXILiteCSRBridge
from matndp.hw.fpga.memory_master import AXIMemoryMaster
from matndp.hw.fpga.slave_port import AXISlavePort
from matndp.sim.formal import FormalFailure, prove
from matndp.sim.formal.axi_ports import GPUSideHarness, MemorySideHarness, RegisterPortHarness


# The least widths the ports take (AXI's 32-bit data is one 4-byte sector; one id bit; the
# slice's 16 address bits), two read slots and two write bursts: every queue and ring of
# the ports is filled within a few transfers.
CONFIG = NDPConfig(addr_width=16, sector_bytes=4, id_width=1, counter_width=8,
                   trigger=TriggerConfig(filter_entries=2, event_queue_depth=2), engine=None)
AXI_CONFIG = AXIConfig(id_width=1, read_slots=2, write_bursts=2)
MAX_BEATS = 2
MAX_OUTSTANDING = 2
# Depths at which every witness below is reached (a two-beat burst answered, a port
# refusing a transfer).
GPU_DEPTH = 12
MEMORY_DEPTH = 12
REGISTER_DEPTH = 12


def gpu_side(adapter=None):
    return GPUSideHarness(CONFIG, AXI_CONFIG, max_beats=MAX_BEATS,
                          max_outstanding=MAX_OUTSTANDING, adapter=adapter)


def memory_side(adapter=None):
    return MemorySideHarness(CONFIG, max_outstanding=MAX_OUTSTANDING, adapter=adapter)


def register_port(adapter=None):
    return RegisterPortHarness(register_map(CONFIG), max_outstanding=MAX_OUTSTANDING,
                               adapter=adapter)


@pytest.mark.slow
def test_the_gpu_side_keeps_the_axi4_rules(timed_proof):
    timed_proof(gpu_side(), GPU_DEPTH)


def test_the_memory_side_keeps_the_axi4_rules(timed_proof):
    timed_proof(memory_side(), MEMORY_DEPTH)


def test_the_register_port_keeps_the_axi4_lite_rules(timed_proof):
    timed_proof(register_port(), REGISTER_DEPTH)


# --- mutants: the shipped adapter with one output overridden after it is elaborated -----

def _mutant(base, override):
    class Mutant(base):
        def elaborate(self, platform):
            m = super().elaborate(platform)
            override(self, m)
            return m
    return Mutant


def _last_on_every_beat(port, m):
    m.d.comb += port.axi.rlast.eq(1)


def _answers_with_id_zero(port, m):
    m.d.comb += port.axi.bid.eq(0)


def _write_data_not_last(master, m):
    m.d.comb += master.axi.wlast.eq(0)


def _read_offered_from_the_slice(master, m):
    # ARVALID straight from the slice's request rather than from the AR register.
    request = master.port.req
    m.d.comb += master.axi.arvalid.eq(request.valid & ~request.payload.write)


def _read_answer_for_a_write(bridge, m):
    m.d.comb += bridge.axil.rvalid.eq(bridge.axil.bvalid)


MUTANTS = {
    "gpu side: RLAST on every beat": (gpu_side, AXISlavePort, _last_on_every_beat),
    "gpu side: B with id 0": (gpu_side, AXISlavePort, _answers_with_id_zero),
    "memory side: WLAST low": (memory_side, AXIMemoryMaster, _write_data_not_last),
    "memory side: ARVALID from the slice": (memory_side, AXIMemoryMaster, _read_offered_from_the_slice),
    "register port: RVALID for a write": (register_port, AXILiteCSRBridge, _read_answer_for_a_write),
}
DEPTHS = {gpu_side: GPU_DEPTH, memory_side: MEMORY_DEPTH, register_port: REGISTER_DEPTH}


@pytest.mark.parametrize("name", MUTANTS)
def test_a_mutated_port_fails_the_proof(name):
    harness, base, override = MUTANTS[name]
    if base is AXISlavePort:
        adapter = _mutant(base, override)(CONFIG, AXI_CONFIG)
    elif base is AXIMemoryMaster:
        adapter = _mutant(base, override)(CONFIG)
    else:
        adapter = _mutant(base, override)(register_map(CONFIG))
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(harness(adapter), depth=DEPTHS[harness])


# --- witnesses: conditions asserted never to happen, which the solver must show do --------

class _Witness(wiring.Component):
    """``harness`` with one more assertion: ``happens(harness, m)`` never holds."""

    def __init__(self, harness, happens):
        self.harness, self.happens = harness, happens
        super().__init__(dict(harness.signature.members))

    def elaborate(self, platform):
        m = Module()
        m.submodules.harness = harness = self.harness
        for name in self.signature.members:
            connect(m, flipped(getattr(self, name)), getattr(harness, name))
        m.d.comb += Assert(~self.happens(self, m), "witness")
        return m


def _after_a_beat_not_last(m, fire, last):
    """A beat with ``last`` after one without."""
    seen = Signal()
    with m.If(fire & ~last):
        m.d.sync += seen.eq(1)
    return fire & last & seen


def _two_beat_read(top, m):
    axi = top.axi
    return _after_a_beat_not_last(m, axi.rvalid & axi.rready, axi.rlast)


def _two_beat_write_answered(top, m):
    axi = top.axi
    burst_done = _after_a_beat_not_last(m, axi.wvalid & axi.wready, axi.wlast)
    seen = Signal()
    with m.If(burst_done):
        m.d.sync += seen.eq(1)
    return seen & axi.bvalid


def _refused(channel):
    def happens(top, m):
        bus = getattr(top, "axil" if hasattr(top, "axil") else "axi")
        return getattr(bus, f"{channel}valid") & ~getattr(bus, f"{channel}ready")
    return happens


def _memory_answer(top, m):
    return top.port.resp.valid & top.port.resp.ready


WITNESSES = {
    "gpu side: a two-beat read burst": (gpu_side, _two_beat_read),
    "gpu side: a two-beat write burst answered": (gpu_side, _two_beat_write_answered),
    "gpu side: W refused": (gpu_side, _refused("w")),
    "memory side: a read answered": (memory_side, _memory_answer),
    "memory side: a request refused": (memory_side, lambda top, m: top.port.req.valid &
                                                                   ~top.port.req.ready),
    "register port: a read answered": (register_port, lambda top, m: top.axil.rvalid &
                                                                     top.axil.rready),
    "register port: AW refused": (register_port, _refused("aw")),
}


# The GPU side's witnesses (some 3 s of CPU each) in the slow suite only.
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow)
                                  if WITNESSES[name][0] is gpu_side else name
                                  for name in WITNESSES])
def test_the_depth_reaches(name):
    harness, happens = WITNESSES[name]
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(_Witness(harness(), happens), depth=DEPTHS[harness])


def test_a_harness_refuses_another_adapter_by_name():
    with pytest.raises(TypeError, match="the adapter must be an AXIMemoryMaster"):
        memory_side(adapter=AXILiteCSRBridge(register_map(CONFIG)))


def test_the_gpu_side_refuses_a_config_that_is_not_an_axi_config():
    with pytest.raises(TypeError, match="axi_config must be an AXIConfig, not 8"):
        GPUSideHarness(CONFIG, 8, max_beats=MAX_BEATS, max_outstanding=MAX_OUTSTANDING)
