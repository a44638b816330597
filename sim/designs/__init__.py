"""Every design the simulators run, configured and exported to Verilog.

:mod:`.configs` holds the build configurations; :mod:`.files` turns a configured design
into a Verilog file (exported once per process, adjusted for the simulator);
:mod:`.slice`, :mod:`.expander` and :mod:`.port_fifos` are the designs;
:mod:`.testbench_config` hands a design's configuration to the testbench that runs it.
Their names are re-exported here.
"""

from matndp.sim.designs.configs import (EXPANDER_CONFIG, EXPANDER_PORTS, FPGA_ENGINE_SLICE,
                                        KERNEL_CONFIG, PIPELINED_TRIGGER_SLICE, TRIGGER_SLICE)
from matndp.sim.designs.expander import (AXI_EXPANDER_MODULE, EXPANDER_MODULE,
                                         axi_expander_verilog, expander_slice_verilog)
from matndp.sim.designs.files import design_file, evaluate_at_time_zero, simulator_transform
from matndp.sim.designs.port_fifos import MemoryPortFIFOs, memory_port_fifos_verilog
from matndp.sim.designs.slice import AXI_SLICE_MODULE, axi_slice_verilog, ndp_slice_verilog
from matndp.sim.designs.testbench_config import (CONFIG_VARIABLE, config_environment,
                                                 config_from_environment, config_from_json)


__all__ = [
    "TRIGGER_SLICE", "PIPELINED_TRIGGER_SLICE", "KERNEL_CONFIG", "FPGA_ENGINE_SLICE",
    "EXPANDER_CONFIG", "EXPANDER_PORTS",
    "EXPANDER_MODULE", "AXI_EXPANDER_MODULE", "expander_slice_verilog", "axi_expander_verilog",
    "design_file", "evaluate_at_time_zero", "simulator_transform",
    "MemoryPortFIFOs", "memory_port_fifos_verilog",
    "AXI_SLICE_MODULE", "ndp_slice_verilog", "axi_slice_verilog",
    "CONFIG_VARIABLE", "config_environment", "config_from_environment", "config_from_json",
]
