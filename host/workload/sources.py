"""Trace specifications of the command line, ``FORMAT:PATH``: ``g10:DIR`` (G10's
kernels.config and cudnn<B>.txt), ``torch:FILE`` (a PyTorch profiler trace) and
``workload:FILE`` (the workload format)."""

from ..registry import Registry
from .format import read_workload
from .g10 import read_g10
from .torch_trace import read_torch_trace


__all__ = ["TRACE_READERS", "read_trace"]


class _Reader:
    def __init__(self, name, read, describes):
        self.name, self.read, self.describes = name, read, describes


TRACE_READERS = Registry("trace format", (
    _Reader("g10", read_g10, "a directory with G10's kernels.config and cudnn<B>.txt"),
    _Reader("torch", read_torch_trace, "a PyTorch profiler Chrome trace (JSON)"),
    _Reader("workload", read_workload, "a workload file (matndp-workload JSON)"),
))


def read_trace(spec):
    """The workload named by ``FORMAT:PATH``; ValueError for a malformed specification."""
    kind, sep, path = spec.partition(":")
    if not sep or not path:
        raise ValueError(f"trace {spec!r}: give FORMAT:PATH, FORMAT one of "
                         f"{', '.join(TRACE_READERS.names)}")
    return TRACE_READERS.lookup(kind).read(path)
