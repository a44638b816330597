"""cocotb testbenches, bus drivers, simulation-side models and the simulator runner."""
