"""Exported Verilog of the designs the testbenches run, written once per configuration,
and the passage of a configuration to a testbench.

A testbench runs in the simulator's own process; it learns the configuration its design
was built with from the environment (:func:`config_environment` on the launching side,
:func:`config_from_environment` in the testbench).
"""

from dataclasses import asdict, fields, is_dataclass
import functools
import hashlib
import json
import os
import re
import typing

from amaranth.hdl import Module, Shape
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.export import export_verilog
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.top import AXISlice
from matndp.hw.layouts import MemoryPortSignature, request_layout, response_layout
from matndp.hw.ndp_slice import NDPSlice
from .runner import build_root, write_if_changed


__all__ = ["ndp_slice_verilog", "axi_slice_verilog", "AXI_SLICE_MODULE", "evaluate_at_time_zero", "MemoryPortFIFOs", "memory_port_fifos_verilog",
           "CONFIG_VARIABLE", "TRIGGER_SLICE", "PIPELINED_TRIGGER_SLICE", "config_environment", "config_from_environment", "config_from_json"]


CONFIG_VARIABLE = "MATNDP_CONFIG"
# The slice of the trigger alone, at the default parameters: the trigger's own testbench
# watches its events port.
TRIGGER_SLICE = NDPConfig(engine=None)
# The same with the trigger's request side pipelined, as an FPGA build clocks it.
PIPELINED_TRIGGER_SLICE = NDPConfig(engine=None, trigger=TriggerConfig(pipelined=True))


# Exporting the slice takes seconds, and a test process asks for the same few designs
# again and again: each is exported once per process and build directory.
@functools.cache
def _exported(build, build_design, name, parameters, transform):
    text = export_verilog(build_design(*parameters), name)
    if transform is not None:
        text = transform(text)
    tag = hashlib.sha256(repr(parameters[0] if len(parameters) == 1 else parameters).encode()).hexdigest()[:8]
    suffix = "" if transform is None else f"-{transform.__name__}"
    return write_if_changed(build / "verilog" / f"{name}-{tag}{suffix}.v", text)


def _design_file(build_design, name, *parameters, transform=None):
    path = _exported(build_root(), build_design, name, parameters, transform)
    if not path.exists():
        _exported.cache_clear()
        path = _exported(build_root(), build_design, name, parameters, transform)
    return path


# Yosys's Verilog names a register in every module, initialized to 0, in each `always @*`
# block, so that a change of it at time 0 evaluates every block once. Icarus gives
# declaration initializers their value before any process waits, without an event, so a
# block whose inputs never change (logic behind registers that keep their reset value)
# would stay undefined. Setting the register again after time 0's processes have started
# gives the intended evaluation; the logic is unchanged.
_TIME_ZERO_REGISTER = re.compile(r"^(\s*)reg (\\\$auto\$verilog_backend\.cc:\d+:dump_module\$\d+ ) = 0;$",
                                 re.MULTILINE)


def evaluate_at_time_zero(text):
    """``text`` (Verilog from :func:`~matndp.hw.export.export_verilog`) with every
    combinational block evaluated once at time 0 in every simulator."""
    return _TIME_ZERO_REGISTER.sub(r"\1reg \2 = 0;\n\1initial #0 \2 = 1;", text)


def ndp_slice_verilog(config=None, *, simulator="verilator"):
    """The exported Verilog file of the NDP slice built with ``config`` (default
    :class:`~matndp.hw.config.NDPConfig`), under ``build/verilog/``, for ``simulator``
    (Icarus gets :func:`evaluate_at_time_zero`: without it, logic behind the engine's
    registers that keep their reset value stays undefined there)."""
    transform = evaluate_at_time_zero if simulator == "icarus" else None
    return _design_file(NDPSlice, "ndp_slice", config or NDPConfig(), transform=transform)


# The FPGA top's module name, in `make verilog`'s export and in the testbenches' builds.
AXI_SLICE_MODULE = "ndp_slice_axi"


def axi_slice_verilog(config=None, axi_config=None, *, simulator="verilator"):
    """The FPGA top around the slice of ``config`` (default: the trigger alone), for
    ``simulator`` (Icarus gets :func:`evaluate_at_time_zero`; Verilator evaluates every
    block at time 0 anyway and refuses delays)."""
    transform = evaluate_at_time_zero if simulator == "icarus" else None
    return _design_file(AXISlice, AXI_SLICE_MODULE, config or TRIGGER_SLICE,
                        axi_config or AXIConfig(), transform=transform)


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
    return _design_file(MemoryPortFIFOs, "memory_port_fifos", config, depth)


def config_environment(config):
    """The environment that hands ``config`` to a testbench."""
    if not isinstance(config, NDPConfig):
        raise TypeError(f"expected an NDPConfig, not {config!r}")
    return {CONFIG_VARIABLE: json.dumps(asdict(config), sort_keys=True)}


def _build(cls, values, where):
    if not isinstance(values, dict):
        raise ValueError(f"{where}: expected an object of {cls.__name__} parameters, not {values!r}")
    known = {item.name for item in fields(cls)}
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"{where}: {cls.__name__} has no parameter(s) {', '.join(sorted(unknown))}")
    types = typing.get_type_hints(cls)
    arguments = {}
    for name, value in values.items():
        # A field typed ``SomeConfig | None`` holds a configuration or None.
        kinds = [kind for kind in typing.get_args(types[name]) or (types[name],)
                 if is_dataclass(kind)]
        if kinds and value is not None:
            arguments[name] = _build(kinds[0], value, f"{where}.{name}")
        else:
            arguments[name] = value
    return cls(**arguments)


def config_from_json(text, where=CONFIG_VARIABLE):
    """The :class:`NDPConfig` that :func:`config_environment` serialized; validated as
    any configuration a user builds."""
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: not JSON ({error})") from None
    return _build(NDPConfig, values, where)


def config_from_environment(default=None):
    """The configuration the launching side put in the environment, or ``default`` (the
    default configuration when that is None)."""
    text = os.environ.get(CONFIG_VARIABLE)
    if text is None:
        return default or NDPConfig()
    return config_from_json(text)
