"""The expander slice and its FPGA top under a simulator: their exported Verilog and the
configuration the tests and benchmarks build them with (docs/ndpxnet-rtl.md)."""

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.expander import ExpanderSlice
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.expander_top import AXIExpander
from .designs import _design_file, evaluate_at_time_zero


__all__ = ["EXPANDER_CONFIG", "EXPANDER_PORTS", "EXPANDER_MODULE", "AXI_EXPANDER_MODULE",
           "expander_slice_verilog", "axi_expander_verilog"]


EXPANDER_MODULE = "expander_slice"
# The expander's FPGA top, in `make verilog`'s export (build/verilog/expander_axi.v) and in
# the testbenches' builds.
AXI_EXPANDER_MODULE = "expander_axi"
EXPANDER_PORTS = 4
# The slice the expander tests run on: the default engine, with fewer filter entries,
# argument blocks and instruction words than a channel slice (an expander watches a few
# gradient tensors at a time), which keeps its build short.
EXPANDER_CONFIG = NDPConfig(
    id_width=6, trigger=TriggerConfig(filter_entries=4),
    engine=EngineConfig(instruction_words=512, argument_blocks=4, scratchpad_bytes=16384))


def _expander(config, ports):
    return ExpanderSlice(config, ports)


def expander_slice_verilog(config=EXPANDER_CONFIG, ports=EXPANDER_PORTS, *, simulator="verilator"):
    """The exported Verilog file of the expander slice of ``config`` with ``ports`` GPU
    ports, for ``simulator`` (Icarus gets :func:`~.designs.evaluate_at_time_zero`)."""
    transform = evaluate_at_time_zero if simulator == "icarus" else None
    return _design_file(_expander, EXPANDER_MODULE, config, ports, transform=transform)


def axi_expander_verilog(config=EXPANDER_CONFIG, ports=EXPANDER_PORTS, axi_config=None, *,
                         simulator="verilator"):
    """The exported Verilog file of the expander's FPGA top
    (:class:`~matndp.hw.fpga.expander_top.AXIExpander`) around the expander slice of
    ``config`` with ``ports`` GPU ports, each sized by ``axi_config`` (default
    :class:`~matndp.hw.fpga.config.AXIConfig`), for ``simulator``."""
    transform = evaluate_at_time_zero if simulator == "icarus" else None
    return _design_file(AXIExpander, AXI_EXPANDER_MODULE, config, ports,
                        axi_config or AXIConfig(), transform=transform)
