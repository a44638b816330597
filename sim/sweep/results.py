"""The output of a sweep: one JSON line per point, and resumption from it.

A line is ``{"key", "point", "config", "seed", "status", "results" | "error", "wall_s",
"worker"}``: ``key`` is :func:`matndp.sim.sweep.spec.point_key` of the point, ``status``
``"ok"`` (with ``results``) or ``"failed"`` (with ``error``, the exception's type and
message). ``wall_s`` and ``worker`` (host and process) are how the point ran, not what it
gave: :data:`TIMING_FIELDS`.

Lines are appended as points finish, each in one write and flushed, so a run that is
stopped leaves at most its last line half-written. Reading the file back for a resumed
run drops such a line (and reruns its point); any other line that is not a result line
is an error naming the file and line.
"""

import json
import os
import pathlib


__all__ = ["TIMING_FIELDS", "ResultFile", "result_line"]


TIMING_FIELDS = ("wall_s", "worker")

_REQUIRED = ("key", "point", "config", "seed", "status")


def result_line(point, *, results=None, error=None, wall_s, worker):
    line = {"key": point.key, "point": point.function, "config": point.config,
            "seed": point.seed}
    if error is None:
        line.update(status="ok", results=results)
    else:
        line.update(status="failed", error=error)
    line.update(wall_s=round(wall_s, 6), worker=worker)
    return line


class ResultFile:
    """The JSON-lines file at ``path``: :meth:`load` reads what earlier runs finished,
    :meth:`append` adds a line."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self._file = None

    def load(self):
        """The lines already in the file (none if it does not exist), after dropping a
        half-written last line from the file itself."""
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        complete, newline, partial = data.rpartition(b"\n")
        lines = []
        for number, chunk in enumerate(complete.split(b"\n") if newline else [], 1):
            line = self._parse(chunk)
            if line is None:
                raise ValueError(f"{self.path}:{number}: not a sweep result line "
                                 f"({chunk[:80].decode(errors='replace')!r}); "
                                 f"write the sweep to another --output")
            lines.append(line)
        if partial:
            # The line a stopped run was writing: its point runs again.
            with open(self.path, "r+b") as file:
                file.truncate(len(data) - len(partial))
        return lines

    @staticmethod
    def _parse(chunk):
        try:
            line = json.loads(chunk)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(line, dict) or any(key not in line for key in _REQUIRED):
            return None
        return line

    def rewrite(self, lines):
        """Replace the file's lines with ``lines`` (atomically)."""
        temporary = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        temporary.write_text("".join(_text(line) for line in lines))
        os.replace(temporary, self.path)

    def append(self, line):
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a")
        self._file.write(_text(line))
        self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _text(line):
    return json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n"
