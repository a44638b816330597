"""Design-space sweeps: a specification (a point function, fixed parameters, axes and
seeds) expanded to points, run on a local process pool or a Ray cluster, written as JSON
lines (one per point) with a summary plot, and resumed from that file. docs/sweep.md
describes the specification and the output."""

from matndp.sim.sweep.results import TIMING_FIELDS, ResultFile
from matndp.sim.sweep.run import SweepSummary, run_sweep
from matndp.sim.sweep.runners import LocalPool, RayCluster, run_point
from matndp.sim.sweep.spec import Point, SpecError, SweepSpec, load_spec, parse_spec, point_key


__all__ = ["SpecError", "Point", "SweepSpec", "load_spec", "parse_spec", "point_key",
           "LocalPool", "RayCluster", "run_point", "ResultFile", "TIMING_FIELDS",
           "SweepSummary", "run_sweep"]
