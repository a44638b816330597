"""Simulation and everything built on it: the simulator runner, the configured designs,
drivers and testbenches, batch runs, golden models and proofs (the infrastructure); runs
of real workloads through the RTL (``flows``); the FPGA tool flow, benchmarks, sweeps,
generated documents and the ``matndp`` command line. May import :mod:`matndp.hw` and
:mod:`matndp.host` (docs/architecture.md)."""

# The folder is the package ``matndp.sim``; imported under its bare folder name it would
# be a second copy of every module (and of every enum and layout), so refuse.
if __name__ != "matndp.sim":
    raise ImportError(f"import matndp.sim, not {__name__}: the folder sim/ is installed as "
                      f"the package matndp.sim (run `make setup`)")
