"""The RTL mutant runner: each mutant of the catalog (:mod:`.rtl_mutants`) is applied to a
copy of the tree and the tests it names run against the copy.

A copy holds ``hw/`` as ``matndp/hw`` beside copies of ``tests/``, ``docs/`` and
``pyproject.toml``; its root goes first on ``PYTHONPATH``, so ``matndp.hw`` is the mutated
copy while ``matndp.sim`` and ``matndp.host`` come from the installed tree, and
``MATNDP_BUILD`` points into it, so exported Verilog and simulator builds stay there too.
Before any mutant runs, every group of tests runs once on an unmutated copy: a test that
fails there would "kill" every mutant, so the run stops instead.
"""

from concurrent.futures import ThreadPoolExecutor
import os
import pathlib
import shutil
import subprocess
import sys
import time

from .results import EQUIVALENT, KILLED, SURVIVED, Outcome, Run
from .staging import copy_package
from .rtl_mutants import MUTANTS


__all__ = ["PYTEST", "copy_tree", "apply", "run_tests", "run"]


PYTEST = ["-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
# A mutant that makes a test hang (a handshake that never completes) is killed by the
# timeout: this many times the unmutated run, and at least a minute.
_TIMEOUT_FACTOR, _TIMEOUT_FLOOR = 10, 60.0


def copy_tree(repository, directory):
    """An unmutated copy of what the tests need, in ``directory`` (emptied first)."""
    return copy_package(repository, directory, "hw", ("pyproject.toml",))


def _source(directory, mutant):
    """Where ``mutant``'s file (``hw/...``) lies in a copy."""
    return pathlib.Path(directory) / "matndp" / mutant.file


def apply(directory, mutant):
    """Apply ``mutant`` to the copy in ``directory``; its snippet must occur exactly once."""
    path = _source(directory, mutant)
    text = path.read_text()
    found = text.count(mutant.snippet)
    if found != 1:
        raise ValueError(f"mutant {mutant.id}: the snippet occurs {found} times in "
                         f"{mutant.file}, not once: {mutant.snippet!r}")
    path.write_text(text.replace(mutant.snippet, mutant.replacement))


def _environment(directory):
    return {**os.environ, "PYTHONPATH": str(directory), "PYTHONDONTWRITEBYTECODE": "1",
            "MATNDP_BUILD": str(pathlib.Path(directory) / "build")}


def run_tests(directory, tests, *, timeout=None):
    """Run ``tests`` against the copy in ``directory``: (pytest exit code or ``None`` for a
    timeout, seconds, the output's tail)."""
    start = time.monotonic()
    try:
        result = subprocess.run([sys.executable, *PYTEST, *tests], cwd=directory,
                                env=_environment(directory), text=True, timeout=timeout,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start, "timeout"
    return result.returncode, time.monotonic() - start, result.stdout[-3000:]


def _check_copy_is_imported(directory):
    where = subprocess.run([sys.executable, "-c", "import matndp.hw; print(matndp.hw.__file__)"],
                           cwd=directory, env=_environment(directory), text=True,
                           capture_output=True, check=True).stdout.strip()
    if not pathlib.Path(where).resolve().is_relative_to(pathlib.Path(directory).resolve()):
        raise SystemExit(f"the copy's matndp.hw is not the one imported: {where}")


def _baseline(repository, workspace, groups):
    """Seconds each test group takes on an unmutated copy; stops the run if one fails."""
    directory = copy_tree(repository, workspace / "baseline")
    _check_copy_is_imported(directory)
    seconds = {}
    for tests in groups:
        code, took, output = run_tests(directory, tests)
        if code != 0:
            raise SystemExit(f"the unmutated tree fails {' '.join(tests)} (exit {code}):\n{output}")
        seconds[tests] = took
        print(f"rtl: baseline {took:6.1f} s  {' '.join(tests)}", flush=True)
    shutil.rmtree(directory)
    return seconds


def _run_one(repository, workspace, mutant, baseline_seconds):
    directory = copy_tree(repository, workspace / mutant.id)
    apply(directory, mutant)
    timeout = max(_TIMEOUT_FLOOR, _TIMEOUT_FACTOR * baseline_seconds)
    code, took, output = run_tests(directory, mutant.tests, timeout=timeout)
    shutil.rmtree(directory)
    if code not in (0, 1, None):
        raise SystemExit(f"mutant {mutant.id}: pytest exit {code} (not a pass or a failure):\n{output}")
    killed = code != 0
    if mutant.equivalent:
        if killed:
            raise SystemExit(f"mutant {mutant.id} is listed as equivalent but its tests fail:\n{output}")
        outcome, note = EQUIVALENT, mutant.equivalent
    else:
        outcome, note = (KILLED, "timeout" if code is None else "") if killed else (SURVIVED, mutant.note)
    print(f"rtl: {outcome:10} {took:6.1f} s  {mutant.id}", flush=True)
    return Outcome(mutant.id, mutant.part, outcome, f"{mutant.snippet.strip()} → "
                   f"{mutant.replacement.strip()}", note)


def run(repository, workspace, *, only=None, jobs=1, command=""):
    """Run the catalog (or the mutants named in ``only``); returns the :class:`~.results.Run`."""
    workspace = pathlib.Path(workspace)
    known = {mutant.id: mutant for mutant in MUTANTS}
    unknown = sorted(set(only or ()) - set(known))
    if unknown:
        raise SystemExit(f"no RTL mutant named {', '.join(unknown)}")
    chosen = [known[name] for name in only] if only else list(MUTANTS)
    groups = list(dict.fromkeys(mutant.tests for mutant in chosen))
    seconds = _baseline(repository, workspace, groups)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(pool.map(lambda mutant: _run_one(repository, workspace, mutant,
                                                         seconds[mutant.tests]), chosen))
    return Run("rtl", command, len(MUTANTS), outcomes)
