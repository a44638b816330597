"""The NDP slice and its FPGA top as Verilog files for the simulators."""

from matndp.hw.config import NDPConfig
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.top import AXISlice
from matndp.hw.ndp_slice import NDPSlice
from matndp.sim.designs.configs import TRIGGER_SLICE
from matndp.sim.designs.files import design_file, simulator_transform


__all__ = ["ndp_slice_verilog", "axi_slice_verilog", "AXI_SLICE_MODULE"]


def ndp_slice_verilog(config=None, *, simulator="verilator"):
    """The exported Verilog file of the NDP slice built with ``config`` (default
    :class:`~matndp.hw.config.NDPConfig`), under ``build/verilog/``, for ``simulator``
    (:func:`~matndp.sim.designs.files.simulator_transform`)."""
    return design_file(NDPSlice, "ndp_slice", config or NDPConfig(),
                       transform=simulator_transform(simulator))


# The FPGA top's module name, in `make verilog`'s export and in the testbenches' builds.
AXI_SLICE_MODULE = "ndp_slice_axi"


def axi_slice_verilog(config=None, axi_config=None, *, simulator="verilator"):
    """The FPGA top around the slice of ``config`` (default: the trigger alone), for
    ``simulator``."""
    return design_file(AXISlice, AXI_SLICE_MODULE, config or TRIGGER_SLICE,
                       axi_config or AXIConfig(), transform=simulator_transform(simulator))
