"""The expander slice and its FPGA top as Verilog files for the simulators
(docs/ndpxnet-rtl.md)."""

from matndp.hw.expander import ExpanderSlice
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.expander_top import AXIExpander
from matndp.sim.designs.configs import EXPANDER_CONFIG, EXPANDER_PORTS
from matndp.sim.designs.files import design_file, simulator_transform


__all__ = ["EXPANDER_MODULE", "AXI_EXPANDER_MODULE", "expander_slice_verilog",
           "axi_expander_verilog"]


EXPANDER_MODULE = "expander_slice"
# The expander's FPGA top, in `make verilog`'s export (build/verilog/expander_axi.v) and in
# the testbenches' builds.
AXI_EXPANDER_MODULE = "expander_axi"


def _expander(config, ports):
    return ExpanderSlice(config, ports)


def expander_slice_verilog(config=EXPANDER_CONFIG, ports=EXPANDER_PORTS, *, simulator="verilator"):
    """The exported Verilog file of the expander slice of ``config`` with ``ports`` GPU
    ports, for ``simulator``."""
    return design_file(_expander, EXPANDER_MODULE, config, ports,
                       transform=simulator_transform(simulator))


def axi_expander_verilog(config=EXPANDER_CONFIG, ports=EXPANDER_PORTS, axi_config=None, *,
                         simulator="verilator"):
    """The exported Verilog file of the expander's FPGA top
    (:class:`~matndp.hw.fpga.expander_top.AXIExpander`) around the expander slice of
    ``config`` with ``ports`` GPU ports, each sized by ``axi_config`` (default
    :class:`~matndp.hw.fpga.config.AXIConfig`), for ``simulator``."""
    return design_file(AXIExpander, AXI_EXPANDER_MODULE, config, ports,
                       axi_config or AXIConfig(), transform=simulator_transform(simulator))
