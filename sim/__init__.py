"""Simulation: the simulator runner, cocotb testbenches, bus drivers, memory models, golden
models, formal checks, synthesis, lint, benchmarks and the ``matndp`` command line. May
import :mod:`matndp.hw` and :mod:`matndp.host`."""

# The folder is the package ``matndp.sim``; imported under its bare folder name it would
# be a second copy of every module (and of every enum and layout), so refuse.
if __name__ != "matndp.sim":
    raise ImportError(f"import matndp.sim, not {__name__}: the folder sim/ is installed as "
                      f"the package matndp.sim (run `make setup`)")
