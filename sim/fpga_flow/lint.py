"""``make lint``: Verilator ``--lint-only -Wall`` on exported Verilog, with the waivers of
``sim/fpga_flow/lint_waivers.vlt`` (each with its reason)."""

import pathlib
import shutil
import subprocess
import sys

from matndp.sim.environment import put_environment_tools_on_path


__all__ = ["lint", "WAIVERS"]


WAIVERS = pathlib.Path(__file__).with_name("lint_waivers.vlt")


def lint(verilog, top="ndp_slice"):
    verilog = pathlib.Path(verilog)
    if not verilog.is_file():
        raise FileNotFoundError(f"no Verilog at {verilog}; run `make verilog` first")
    put_environment_tools_on_path()
    if shutil.which("verilator") is None:
        from matndp.sim.runner import ToolMissing
        raise ToolMissing("verilator is not installed (not beside this Python nor on PATH); "
                          "run `make setup`")
    command = ["verilator", "--lint-only", "-Wall", "--top-module", top, str(WAIVERS), str(verilog)]
    result = subprocess.run(command, capture_output=True, text=True)
    output = (result.stdout + result.stderr).strip()
    if result.returncode:
        print(output, file=sys.stderr)
        print(f"matndp lint: {verilog} has lint findings (command: {' '.join(command)})", file=sys.stderr)
        return 1
    print(f"matndp lint: {verilog} is clean under verilator -Wall with {WAIVERS.name}")
    return 0
