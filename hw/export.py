"""Reproducible Verilog export of the RTL."""

from amaranth.back import verilog


__all__ = ["export_verilog"]


def export_verilog(component, name):
    """Verilog text of ``component`` as module ``name``: no source locations, so the output
    is byte-identical across runs and machines."""
    return verilog.convert(component, name=name, emit_src=False)
