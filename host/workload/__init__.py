"""Workloads from files: the versioned workload format (:mod:`.format`) and importers of
traces recorded elsewhere — G10's kernel lists and times (:mod:`.g10`) and PyTorch
profiler traces (:mod:`.torch_trace`). Every importer returns an
:class:`~host.graph.IterationGraph` whose ops carry their measured durations."""

from .errors import WorkloadError
from .format import FORMAT, VERSION, dump_workload, load_workload, read_workload, write_workload
from .g10 import read_g10
from .torch_trace import read_torch_trace
from .sources import TRACE_READERS, read_trace


__all__ = ["WorkloadError", "FORMAT", "VERSION", "dump_workload", "load_workload",
           "read_workload", "write_workload", "read_g10", "read_torch_trace", "TRACE_READERS",
           "read_trace"]
