"""Builds of RTL configurations that sweep points share, each made once.

A configuration's entry lives under ``build/sweep/rtl/<hash>/``, where the hash is that of
the configuration's canonical JSON: ``config.json`` (what it was built from) and
``verilog.txt``, the path of its exported Verilog. The Verilog is the file every other user
of that configuration simulates (:func:`matndp.sim.designs.ndp_slice_verilog`), so the
simulator's compiled model, which the runner caches under ``build/sim_build`` by Verilog
text and which Verilator rebuilds when its source file moves, is compiled once per
configuration and shared with the tests and the other commands. Whether that file is
current (made from today's RTL) is the design cache's to say, by the key it keeps beside
the file; workers of any process or run that ask for the same configuration wait on a
file lock for the first one's export and then reuse it.
"""

from dataclasses import asdict
import contextlib
import fcntl
import hashlib
import json
import pathlib

from matndp.sim.runner import build_root


__all__ = ["rtl_build_key", "rtl_build"]


def rtl_build_key(config):
    text = json.dumps(asdict(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@contextlib.contextmanager
def _locked(path):
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def rtl_build(config):
    """The Verilog file of the NDP slice built from ``config`` (an ``NDPConfig``), and
    whether this call wrote it (False: the file there was current)."""
    directory = build_root() / "sweep" / "rtl" / rtl_build_key(config)
    directory.mkdir(parents=True, exist_ok=True)
    pointer = directory / "verilog.txt"
    with _locked(directory / ".lock"):
        previous = pathlib.Path(pointer.read_text().strip()) if pointer.exists() else None
        stamp = _modified(previous)
        from matndp.sim.designs import ndp_slice_verilog
        verilog = ndp_slice_verilog(config).resolve()
        (directory / "config.json").write_text(
            json.dumps(asdict(config), indent=2, sort_keys=True) + "\n")
        pointer.write_text(f"{verilog}\n")
        return verilog, verilog != previous or _modified(verilog) != stamp


def _modified(path):
    return path.stat().st_mtime_ns if path is not None and path.exists() else None
