"""The configurations the testbenches, flows and reports build their designs with, in one
place. Each is an :class:`~matndp.hw.config.NDPConfig`; the parameters themselves are
documented in ``hw/config.py``, where the named configurations (``default``, ``channel``,
``fpga``) are defined."""

from dataclasses import replace

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig, named_config, slice_config


__all__ = ["TRIGGER_SLICE", "PIPELINED_TRIGGER_SLICE", "KERNEL_CONFIG", "FPGA_ENGINE_SLICE",
           "EXPANDER_CONFIG", "EXPANDER_PORTS"]


# The slice of the trigger alone, at the default parameters: the trigger's own testbench
# watches its events port.
TRIGGER_SLICE = NDPConfig(engine=None)
# The same with the trigger's request side pipelined, as an FPGA build clocks it.
PIPELINED_TRIGGER_SLICE = NDPConfig(engine=None, trigger=TriggerConfig(pipelined=True))

# The slice the library's kernels run on in the flows: the named configuration
# ``$MATNDP_SLICE`` names, ``default`` unless it names another (hw.config.slice_config).
KERNEL_CONFIG = slice_config()

# The engine in an FPGA-sized slice: the named configuration ``fpga``.
FPGA_ENGINE_SLICE = named_config("fpga")

# The expander slice's GPU ports in the tests, benchmarks and `make verilog`'s export.
EXPANDER_PORTS = 4
# The slice the expander tests and the bench run on: the named configuration ``channel``'s
# engine with eight sub-cores instead of four (a reduced sector's ~40 instructions against
# its 13 memory accesses: four issue them in 9.75 cycles, too close to the memory bound to
# catch up after the GPUs' writes have held the port, docs/ndpxnet-rtl.md,
# "Measurements"), with fewer filter entries, argument blocks and instruction words than
# a channel slice (an expander watches a few gradient tensors at a time) and a small
# scratchpad (the reduction keeps nothing there), and a gathering table of 4096 sectors (a
# tensor's copy of up to 128 KiB, or several smaller ones).
EXPANDER_CONFIG = NDPConfig(
    id_width=6, trigger=TriggerConfig(filter_entries=4, gather_sectors=4096),
    engine=replace(named_config("channel").engine, sub_cores=8, instruction_words=512,
                   argument_blocks=4, scratchpad_bytes=1024))
