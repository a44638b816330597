"""Batch-mode harnesses: Verilog (and a C++ driver) that stream records from files through
a design with no Python per cycle (docs/simulation.md)."""

import pathlib


__all__ = ["harness_file"]


def harness_file(name):
    """The path of the harness file ``name`` (``fp_harness.v``, ``slice_harness.v``,
    ``slice_harness_memory.cpp``, ``slice_harness_main.cpp``)."""
    path = pathlib.Path(__file__).resolve().parent / name
    if not path.is_file():
        raise FileNotFoundError(f"no harness {name} in {path.parent}")
    return path
