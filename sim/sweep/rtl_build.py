"""Builds of RTL configurations that sweep points share, each made once.

A configuration's build lives under ``build/sweep/rtl/<hash>/``, where the hash is that of
the configuration's canonical JSON: ``config.json`` (what it was built from) and
``ndp_slice.v``. Workers of any process or run that ask for the same configuration wait on
a file lock for the first one's export and then reuse it. The simulator's own compiled
model is cached by the runner (``build/sim_build``, keyed by the Verilog text), so it too
is compiled once per configuration.
"""

from dataclasses import asdict
import contextlib
import fcntl
import hashlib
import json
import os

from ..runner import build_root


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
    whether this call exported it (False: it was cached)."""
    directory = build_root() / "sweep" / "rtl" / rtl_build_key(config)
    directory.mkdir(parents=True, exist_ok=True)
    verilog = directory / "ndp_slice.v"
    with _locked(directory / ".lock"):
        if verilog.exists():
            return verilog, False
        from matndp.hw.export import export_verilog
        from matndp.hw.ndp_slice import NDPSlice
        (directory / "config.json").write_text(
            json.dumps(asdict(config), indent=2, sort_keys=True) + "\n")
        temporary = directory / f"ndp_slice.v.{os.getpid()}.tmp"
        temporary.write_text(export_verilog(NDPSlice(config), "ndp_slice"))
        os.replace(temporary, verilog)
        return verilog, True
