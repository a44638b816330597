"""cocotb test modules, run through :mod:`sim.runner`."""
