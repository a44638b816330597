"""The designs ``matndp synth`` reports on, by name: how to build each, what it is, its
timing class and the placer and router it takes."""

from matndp.hw.arbiter import MemoryArbiter
from matndp.hw.config import NDPConfig, named_config
from matndp.hw.engine.alu import ALU
from matndp.hw.engine.convert import VectorConvert
from matndp.hw.engine.divide import VectorDivide
from matndp.hw.engine.fma_lanes import FMALanes
from matndp.hw.engine.load_store import LoadStoreUnit
from matndp.hw.engine.multiply import Multiply
from matndp.hw.engine.reduce import reduce_unit
from matndp.hw.engine.scratchpad import Scratchpad
from matndp.hw.engine.vector_misc import VectorMisc
from matndp.hw.fp.units import FP_UNITS, timing_text
from matndp.hw.fpga.top import AXISlice
from matndp.hw.ndp_slice import NDPSlice
from matndp.sim.designs import FPGA_ENGINE_SLICE, PIPELINED_TRIGGER_SLICE, TRIGGER_SLICE
from matndp.sim.fpga_flow.synth import DEFAULT_PLACER, DEFAULT_ROUTER


__all__ = ["DESIGNS", "DEFAULT_DESIGNS", "ENGINE_PARTS", "NEXTPNR_DEFAULTS", "WIDE_DESIGN_PNR"]


# nextpnr's placer and router for a design: its defaults (HeAP, router1) for the FP units;
# for the wide designs the electrostatic placer and router2, which route them in minutes
# where HeAP's placement did not route (docs/fp-synthesis.md, "Place and route").
NEXTPNR_DEFAULTS = {"placer": DEFAULT_PLACER, "router": DEFAULT_ROUTER}
WIDE_DESIGN_PNR = {"placer": "static", "router": "router2"}


def _fp_design(unit):
    return {"build": unit, "design": f"{unit.__module__}:{unit.__qualname__}",
            "timing": timing_text(unit) or "-", **NEXTPNR_DEFAULTS}


def _slice_design(config, description):
    return {"build": lambda: NDPSlice(config), "design": f"NDPSlice({description})",
            "timing": "-", **WIDE_DESIGN_PNR}


# Designs: name -> how to build it, what it is, its timing class. ``ndp_slice`` is the
# slice an FPGA prototype ships: the trigger alone, its events on a port.
DESIGNS = {
    **{f"fp_{name}": _fp_design(unit) for name, unit in FP_UNITS.items()},
    "ndp_slice": _slice_design(TRIGGER_SLICE, "NDPConfig(engine=None)"),
    "ndp_slice_pipelined": _slice_design(
        PIPELINED_TRIGGER_SLICE, "NDPConfig(engine=None, trigger=TriggerConfig(pipelined=True))"),
    "ndp_slice_engine": _slice_design(FPGA_ENGINE_SLICE, "named configuration fpga"),
    # The slices of the other named configurations (docs/engine.md, "Named configurations").
    **{f"ndp_slice_engine_{name}": _slice_design(named_config(name), f"named configuration {name}")
       for name in ("default", "channel")},
    # The memory-side arbiter of a slice with an engine, alone.
    "memory_arbiter": {"build": lambda: MemoryArbiter(NDPConfig()),
                       "design": "MemoryArbiter(NDPConfig())", "timing": "-", **WIDE_DESIGN_PNR},
    # The FPGA top around the slice of the trigger alone, as `make verilog` exports it.
    "ndp_slice_axi": {"build": lambda: AXISlice(TRIGGER_SLICE),
                      "design": "AXISlice(NDPConfig(engine=None))", "timing": "-",
                      **WIDE_DESIGN_PNR},
    "ndp_slice_axi_pipelined": {
        "build": lambda: AXISlice(PIPELINED_TRIGGER_SLICE),
        "design": "AXISlice(NDPConfig(engine=None, trigger=TriggerConfig(pipelined=True)))",
        "timing": "-", **WIDE_DESIGN_PNR},
}


def _engine_part(build, description):
    return {"build": lambda: build(FPGA_ENGINE_SLICE),
            "design": f"{description} of the named configuration fpga", "timing": "-",
            **WIDE_DESIGN_PNR}


# The engine's parts in the `fpga` configuration, each alone: where the engine slice's area
# goes (docs/engine.md, "Named configurations"), in minutes each where the slice takes most
# of an hour. Not among them, so counted in the slice's rest: the sub-core's pipeline and
# memories, the entry control and the spawner, on which Yosys's WebAssembly build exhausts
# its stack (in its topological sort) when each is synthesized alone, and the ordering
# station, on which its ABC9 mapping fails without a message.
ENGINE_PARTS = {
    "alu": (ALU, "ALU"),
    "multiply": (Multiply, "Multiply"),
    "fma_lanes": (FMALanes, "FMALanes"),
    "vector_misc": (VectorMisc, "VectorMisc"),
    "convert": (VectorConvert, "VectorConvert"),
    "reduce": (reduce_unit, "the reduce unit"),
    "divide": (VectorDivide, "VectorDivide"),
    "scratchpad": (Scratchpad, "Scratchpad"),
    "load_store": (LoadStoreUnit, "LoadStoreUnit"),
    "memory_arbiter": (MemoryArbiter, "MemoryArbiter"),
}
DESIGNS.update({f"engine_fpga_{name}": _engine_part(build, description)
                for name, (build, description) in ENGINE_PARTS.items()})

# The engine slices take far longer than everything else together; they and the engine's
# parts run when named.
DEFAULT_DESIGNS = [name for name in DESIGNS
                   if not name.startswith(("ndp_slice_engine", "engine_fpga_"))]
