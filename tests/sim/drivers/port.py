"""Runs a cocotb testbench on the memory-port FIFOs the drivers and the memory model are
tested on."""

from matndp.hw.config import NDPConfig
from matndp.sim.designs import config_environment, memory_port_fifos_verilog
from matndp.sim.runner import run_cocotb


# A narrow port, so that payloads are short and byte masks easy to read.
CONFIG = NDPConfig(addr_width=16, sector_bytes=8, id_width=4)


def run_port_testbench(test_module, simulator, seed):
    run_cocotb(sources=[memory_port_fifos_verilog(CONFIG)], toplevel="memory_port_fifos",
               test_module=test_module, simulator=simulator,
               extra_env={**config_environment(CONFIG), "MATNDP_SEED": seed})
