"""The one error type of the workload readers: it names the file and, where there is one,
the line or entry at fault."""


__all__ = ["WorkloadError"]


class WorkloadError(ValueError):
    def __init__(self, path, message, line=None):
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
