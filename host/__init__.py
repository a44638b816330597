"""Python models around the RTL: workloads, GPU timing, offload planning, the NDP runtime,
tiering, energy and reports. Imports :mod:`matndp.hw` (register map, configuration), never
:mod:`matndp.sim` or cocotb, so that it runs without a simulator."""

# The folder is the package ``matndp.host``; imported under its bare folder name it would
# be a second copy of every module (and of every enum and layout), so refuse.
if __name__ != "matndp.host":
    raise ImportError(f"import matndp.host, not {__name__}: the folder host/ is installed as "
                      f"the package matndp.host (run `make setup`)")
