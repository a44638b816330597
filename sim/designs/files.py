"""How a configured design becomes a Verilog file for a simulator: exported once per
process and build directory, named by a hash of its parameters, and adjusted for the
simulator that will run it."""

import functools
import hashlib
import re

from matndp.hw.export import export_verilog
from matndp.sim.runner import build_root, write_if_changed


__all__ = ["design_file", "evaluate_at_time_zero", "simulator_transform"]


# Exporting the slice takes seconds to minutes, and a test process asks for the same few
# designs again and again, for one simulator or both: each design is exported once per
# process, and each simulator's variant written from that one export.
@functools.cache
def _export(build_design, name, parameters):
    return export_verilog(build_design(*parameters), name)


@functools.cache
def _exported(build, build_design, name, parameters, transform):
    text = _export(build_design, name, parameters)
    if transform is not None:
        text = transform(text)
    tag = hashlib.sha256(repr(parameters[0] if len(parameters) == 1 else parameters).encode()).hexdigest()[:8]
    suffix = "" if transform is None else f"-{transform.__name__}"
    return write_if_changed(build / "designs" / f"{name}-{tag}{suffix}.v", text)


def design_file(build_design, name, *parameters, transform=None):
    """The Verilog file of ``build_design(*parameters)`` as module ``name``, under
    ``build/designs/`` (``build/verilog/`` holds `make verilog`'s deliverables), with
    ``transform`` (a function of the text) applied."""
    path = _exported(build_root(), build_design, name, parameters, transform)
    if not path.exists():
        _exported.cache_clear()
        path = _exported(build_root(), build_design, name, parameters, transform)
    return path


# Yosys's Verilog names a register in every module, initialized to 0, in each `always @*`
# block, so that a change of it at time 0 evaluates every block once. Icarus gives
# declaration initializers their value before any process waits, without an event, so a
# block whose inputs never change (logic behind registers that keep their reset value)
# would stay undefined. Setting the register again after time 0's processes have started
# gives the intended evaluation; the logic is unchanged.
_TIME_ZERO_REGISTER = re.compile(r"^(\s*)reg (\\\$auto\$verilog_backend\.cc:\d+:dump_module\$\d+ ) = 0;$",
                                 re.MULTILINE)


def evaluate_at_time_zero(text):
    """``text`` (Verilog from :func:`~matndp.hw.export.export_verilog`) with every
    combinational block evaluated once at time 0 in every simulator."""
    return _TIME_ZERO_REGISTER.sub(r"\1reg \2 = 0;\n\1initial #0 \2 = 1;", text)


def simulator_transform(simulator):
    """What an exported design needs before ``simulator`` runs it: Icarus gets
    :func:`evaluate_at_time_zero` (without it, logic behind registers that keep their reset
    value stays undefined there); Verilator evaluates every block at time 0 anyway and
    refuses delays."""
    return evaluate_at_time_zero if simulator == "icarus" else None
