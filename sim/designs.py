"""Exported Verilog of the designs the testbenches run, written once per configuration."""

import hashlib

from matndp.hw.config import NDPConfig
from matndp.hw.export import export_verilog
from matndp.hw.ndp_slice import NDPSlice
from .runner import build_root, write_if_changed


__all__ = ["ndp_slice_verilog"]


def ndp_slice_verilog(config=None):
    config = config or NDPConfig()
    text = export_verilog(NDPSlice(config), "ndp_slice")
    tag = hashlib.sha256(repr(config).encode()).hexdigest()[:8]
    return write_if_changed(build_root() / "verilog" / f"ndp_slice-{tag}.v", text)
