"""Python models around the RTL: workloads, GPU timing, offload planning, the NDP runtime,
tiering, energy, reports and the ``matndp`` command line."""
