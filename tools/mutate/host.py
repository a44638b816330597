"""mutmut over ``host/``.

The tests import the host models as ``matndp.host``, and mutmut names a mutant by the
module path of its file, so it runs in a staging tree (``build/mutate/host``) where
``host/`` appears as ``matndp/host`` beside copies of ``tests/``, ``docs/`` and
``pyproject.toml``; there ``mutants/`` comes first on the path and ``matndp.host`` is the
mutated copy (``matndp.hw`` and ``matndp.sim`` still come from the installed tree). The
tests that run are :data:`TEST_SELECTION`.

A full run mutates every function of ``host/`` (some twenty thousand mutants, many hours
on two shared cores); by default a sample is drawn by a seed from the mutants no earlier
run drew (:mod:`.history`), so that its kill rate is on mutants no test was written
against. The draw is written to the staging tree (``draw.json``) before any mutant runs:
the seed, and every drawn mutant's name and fingerprint.
"""

import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from . import history, identity
from .results import EQUIVALENT, KILLED, SURVIVED, Outcome, Run
from .staging import copy_package


__all__ = ["EQUIVALENT_MUTANTS", "TEST_SELECTION", "stage", "mutant_names", "sample", "draw",
           "part_of", "outcome_of", "run", "collect"]


# The host models' own tests; the command line's, which run the models in-process; and the
# golden models' (sim/golden), which check the host's kernels and the expander's reduction
# on the instruction-set simulator against them. Not those that run the RTL: the host code
# they reach runs inside the HDL simulator's process, where mutmut cannot follow it.
TEST_SELECTION = ["tests/host", "tests/sim/cli", "tests/sim/golden"]
TEST_MARKERS = "not slow and not rtl"

# Surviving mutants that cannot change behaviour: mutmut's name -> (the line the mutant
# writes, the argument); docs/testing.md lists them. mutmut's numbers shift when a function
# changes, so a claim holds only while its name still makes its change (:func:`equivalence`).
EQUIVALENT_MUTANTS = {
    # The kernel simulator.
    "matndp.host.kernels.fp32.x_fma__mutmut_62": (
        'odd = (total_bits.astype(np.int64) + step).view(None)',
        "ndarray.view(None) reinterprets the bits as numpy's default dtype, float64: the same "
        "as view(np.float64)"),
    "matndp.host.kernels.fp32.x_fma__mutmut_40": (
        'away = (error > 0) == (total >= 0)',
        "total is 0 only when product + addend is exactly 0 (both lie on a grid of 2^-298, far "
        "above float64's smallest step, so a nonzero sum never rounds to 0); the error is then "
        "0 and no step is taken whatever the direction says"),
    "matndp.host.kernels.iss.xǁTriggerEventsǁof__mutmut_7": (
        'data = np.zeros((len(events), sector_bytes), )',
        "the float64 zeros are filled with byte values and TriggerEvents converts data to uint8, "
        "which holds them exactly"),
    "matndp.host.kernels.iss.xǁTriggerEventsǁsectors__mutmut_45": (
        'data[index], np.ones((n, sector_bytes), dtype=None), np.full(n, write))',
        "TriggerEvents converts the mask to bool: float ones become True"),
    "matndp.host.kernels.iss.xǁInstructionSetSimulatorǁ_apply_gpu_writes__mutmut_28": (
        'last = np.r_[keys[1:] != keys[:-1], False]',
        "the vectorized store is a shortcut for sectors written once; the loop it falls back to "
        "applies the same writes in trigger order, so only the speed changes"),
    "matndp.host.kernels.iss.xǁInstructionSetSimulatorǁ_single_thread__mutmut_47": (
        'return Threads(self, ids=np.array([-2]), entries=entries,',
        "an .init or .final µthread is not a .main one, and only .main µthreads' ids are read "
        "(race tracking and the atomic order check)"),
    "matndp.host.kernels.iss.xǁInstructionSetSimulatorǁ_tables__mutmut_22": (
        'self._entry_main = np.zeros(size, dtype=None)',
        "the entry points are small whole numbers, held exactly in float64, and Threads converts "
        "its start pcs to int64"),
    "matndp.host.kernels.iss.xǁInstructionSetSimulatorǁdescribe_race__mutmut_7": (
        'entries = np.concatenate(self._trigger_entry) if self._trigger_entry else np.zeros(int)',
        "the empty case is reached only before any run since the last reset, when no race can "
        "name a trigger: describing one fails either way"),
    "matndp.host.kernels.iss.xǁInstructionSetSimulatorǁdescribe_race__mutmut_5": (
        'entries = np.concatenate(self._trigger_entry) if self._trigger_entry else np.zeros(None, int)',
        "as for describe_race__mutmut_7: _trigger_entry is empty only before the simulator's "
        "first run (nothing clears it), when no race of its own can name a trigger: describing "
        "one fails either way (an IndexError into the empty array, a TypeError here)"),
    "matndp.host.kernels.semantics.x__atomic__mutmut_77": (
        'words = (sectors[:, None] * lanes + np.arange(lanes)).reshape(-2)',
        "numpy reads any negative size in reshape as the one unknown dimension: reshape(-2) is "
        "reshape(-1)"),
    "matndp.host.kernels.semantics.x__atomic__mutmut_117": (
        'rows[touched] = fp32.maximum_accumulate(rows[touched], inverse.reshape(-2), value)',
        "numpy reads any negative size in reshape as the one unknown dimension: reshape(-2) is "
        "reshape(-1)"),
    "matndp.host.kernels.semantics.x__atomic__mutmut_80": (
        'machine.undo.save(store, None)',
        "saving store[None] saves the whole scratchpad; the undo log restores in reverse order, "
        "so restoring the whole of it to its state at that point gives the same result as "
        "restoring the words the atomic wrote"),
    "matndp.host.kernels.iss.xǁInstructionSetSimulatorǁ_execute__mutmut_72": (
        'threads.active[going] = None',
        "Threads.active is a bool array (np.ones(n, dtype=bool)), and numpy stores None in a "
        "bool array as False: the same assignment"),
    "matndp.host.kernels.semantics.x__splat__mutmut_24": (
        '_broadcast_lanes((a & _MASK32).astype(None), threads.lanes))',
        "a & _MASK32 is a uint64 below 2^32, which float64 holds exactly; set_vector stores it "
        "into the uint32 vector registers (Threads.v), converting it back to the same word"),
    "matndp.host.kernels.semantics.x__word_store__mutmut_49": (
        'machine.memory_words[words] = (value[good] & _MASK32).astype(None)',
        "value & _MASK32 is a uint64 below 2^32, which float64 holds exactly; memory_words is "
        "a uint32 view of the memory, so the assignment stores the same word"),
    # The assembler and the divisor descriptors.
    "matndp.host.kernels.assembler.x_assemble__mutmut_64": (
        'line = parsed[error.index] if error.index is not None and error.index <= len(parsed) '
        'else parsed[-1]',
        "the image has one word per parsed line, and every index validate_image names is below "
        "the word count (a word, a pc, a section's last pc, a hazard) except that of 'do not "
        "fit', which assemble refuses first (kernel too large): the index never equals "
        "len(parsed)"),
    "matndp.host.kernels.divisor.x_divisor_descriptor__mutmut_28": (
        'for shift in range(_MAX_SHIFT - 1):',
        "a divisor fits 24 bits, so ceil(2^56 / d) exceeds the largest 32-bit multiplier for "
        "every divisor: the loop returns or breaks at shift 56 at the latest, before either "
        "range ends at 61 or 63"),
    # The GPU model and the files it writes.
    "matndp.host.gpu.x__op_dtype__mutmut_3": (
        'return "XXfp32XX"',
        "the op's arithmetic type is read in one place only, GPUPreset.peak_flops, which "
        "asks whether it is one of HALF_DTYPES: any other name, fp32 or not, gives the FP32 peak"),
    "matndp.host.output.x_save_figure__mutmut_10": (
        'figure.savefig(temporary, dpi=dpi, )',
        "the temporary file keeps the destination's suffix last (atomic_path), and matplotlib "
        "picks the format from a file name's suffix, lower-cased, when none is given"),
    "matndp.host.validation.x_validation_tables__mutmut_556": (
        'pf, pt = published.get(group, ("XX-XX", "-"))',
        "the BERT layers' ops (the fixed bert-base graph the table is built from) are of kinds "
        "gemm, softmax, normalization and elementwise, which _CLASSES maps to the three "
        "published classes: the default pair is never read"),
    # The zoo.
    "matndp.host.zoo.builder.xǁGraphBuilderǁgather_rows__mutmut_25": (
        '_BackwardOp(None, "gather", rows * shape[-1], (y,), (positions,), (x,))])',
        "a backward op's suffix is read once, for its truth value when naming the op "
        "(finish): None and the empty string both name it <layer>.backward"),
    "matndp.host.zoo.gpt2.x_build_gpt2__mutmut_220": (
        'logits = b.linear("lm_head", hidden_states, VOCAB, bias=None, weight="wte.weight")',
        "GraphBuilder.linear reads bias only for its truth value: None and False are both false"),
    # The workloads.
    "matndp.host.workload.synthetic.x_write_synthetic_g10__mutmut_81": (
        'skip_layers = rng.choice(layers - 8, size=skips, replace=None)',
        "numpy's Generator.choice takes replace as a C boolean: None converts to False, so the "
        "same positions are drawn from the same generator state"),
    # The tier models.
    "matndp.host.tier.bench.x_bench_tiering__mutmut_26": (
        'graph, times = model_graph_and_times(model, batch, "A100")',
        "model_graph_and_times reads the GPU's name only through gpu.get_preset, which looks "
        "presets up in any letter case: A100 is the a100 preset"),
    "matndp.host.tier.executor.xǁExecutorǁ_zero_counters__mutmut_24": (
        '"demand_evict_pages": 0, "planned_evict_pages": 0, "planned_fetch_pages": 1,',
        "the executor reports an iteration's counters as their differences from the values "
        "they had when it began (run_iteration's before), so where a counter starts cancels; "
        "only peak_pages is read as it stands, and it is set at every iteration's start"),
    "matndp.host.tier.uvm.xǁUVMExecutorǁ__init____mutmut_105": (
        'self.counters = None',
        "run_iteration sets the counters anew before anything reads them; nothing between the "
        "constructor and the first iteration does"),
    "matndp.host.tier.lifetime.xǁLifetimesǁgap_arrays__mutmut_26": (
        'self.pages[tensors].astype(np.int64) if (len(gaps)) or True else np.zeros(0, np.int64),',
        "with no gaps, tensors is an empty int64 array, and indexing the int64 pages array with "
        "it gives an empty int64 array: the same as np.zeros(0, np.int64)"),
    "matndp.host.tier.policies.tm.x__consume__mutmut_21": (
        'if amount < 0:',
        "with amount exactly 0 the loop goes on, but take = min(budget, 0) is never above 0, so "
        "no slot's budget changes and amount stays 0: the same budget and the same return"),
    "matndp.host.tier.policies.g10.x_plan_g10__mutmut_195": (
        'if fetch_at <= due or due >= gap.before:',
        "fetch_at is at most gap.before (its search runs over the boundaries start … "
        "gap.before), so when due = gap.before the first condition, fetch_at <= due, already holds"),
}



def added_lines(change):
    """The lines a mutmut diff adds, stripped."""
    return [line[1:].strip() for line in change.splitlines()
            if line.startswith("+") and not line.startswith("+++")]


def equivalence(name, change):
    """The argument that mutant ``name``, whose diff is ``change``, cannot change behaviour,
    or None: none is made, or the one made was for another change under that name."""
    claim = EQUIVALENT_MUTANTS.get(name)
    if claim is None or added_lines(change)[:1] != [claim[0].strip()]:
        return None
    return claim[1]


_MUTMUT_CONFIG = {
    "source_paths": ["matndp/host"],
    "also_copy": ["docs", "Makefile"],
    "pytest_add_cli_args": ["-p", "no:cacheprovider", "-W", "error", "-m", TEST_MARKERS],
    "pytest_add_cli_args_test_selection": TEST_SELECTION,
}

_KILLED_STATUSES = {"killed", "timeout", "caught by type check", "segfault"}


def _toml_value(value):
    return json.dumps(value)   # strings and lists of strings: JSON spells them as TOML does


def stage(repository, directory):
    """Lay out the staging tree in ``directory`` (emptied first) from ``repository``."""
    # The tests read the Makefile's targets.
    directory = copy_package(repository, directory, "host", ("Makefile",))
    _write_configuration(pathlib.Path(repository), directory)
    return directory


def _write_configuration(repository, directory):
    text = (repository / "pyproject.toml").read_text()
    text += "\n[tool.mutmut]\n" + "".join(f"{key} = {_toml_value(value)}\n"
                                         for key, value in _MUTMUT_CONFIG.items())
    for root in (directory, directory / "mutants"):
        if root.is_dir():
            (root / "pyproject.toml").write_text(text)


_GENERATE = """
import os
from mutmut.__main__ import copy_also_copy_files, copy_src_dir, create_mutants
from mutmut.mutation.trampoline import set_mutant_under_test
set_mutant_under_test("mutant_generation")
os.makedirs("mutants", exist_ok=True)
copy_src_dir()
copy_also_copy_files()
create_mutants(int(os.environ["MUTATE_CHILDREN"]))
"""


def _meta_files(directory):
    return sorted((pathlib.Path(directory) / "mutants" / "matndp" / "host").rglob("*.py.meta"))


def mutant_names(directory, children=1):
    """Generate the mutants in the staging tree (``children`` processes); every mutant's
    name, sorted."""
    subprocess.run([sys.executable, "-c", _GENERATE], cwd=directory, check=True,
                   stdout=subprocess.DEVNULL, env={**os.environ, "MUTATE_CHILDREN": str(children)})
    names = []
    for meta in _meta_files(directory):
        names += json.loads(meta.read_text())["exit_code_by_key"]
    return sorted(names)


def sample(names, size, seed):
    """``size`` of ``names`` (all of them when ``size`` is None or not smaller), chosen by
    ``seed`` alone and returned sorted."""
    names = sorted(names)
    if size is None or size >= len(names):
        return names
    return sorted(random.Random(seed).sample(names, size))


def draw(fingerprints, size, seed, seen=frozenset()):
    """``size`` of the mutants of ``fingerprints`` (``{name: fingerprint}``) whose
    fingerprint is not in ``seen``, chosen by ``seed`` (:func:`sample`); ``size`` None:
    every mutant, seen or not."""
    if size is None:
        return sorted(fingerprints)
    return sample([name for name, print_ in fingerprints.items() if print_ not in seen], size, seed)


def part_of(name):
    """The part a mutant is reported under: its sub-package of ``host`` (``host/tier``),
    or ``host`` for the top-level modules."""
    parts = name.split(".")
    assert parts[:2] == ["matndp", "host"], name
    return f"host/{parts[2]}" if len(parts) > 4 else "host"


def outcome_of(status):
    """Our outcome for a mutmut status (before equivalence is considered)."""
    return KILLED if status in _KILLED_STATUSES else SURVIVED


def _mutmut(directory, *arguments, log=None):
    executable = pathlib.Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(executable), *arguments], cwd=directory, text=True,
                          stdout=log or subprocess.PIPE, stderr=subprocess.STDOUT,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def _same_tree(first, second):
    files = lambda root: {path.relative_to(root): path.read_bytes() for path in root.rglob("*.py")
                          if "__pycache__" not in path.parts}
    return files(pathlib.Path(first)) == files(pathlib.Path(second))


def refresh(repository, directory):
    """Keep the staging tree in ``directory`` and mutmut's records of its last run (its
    mutants, which tests reach which function) but take ``tests/`` and ``docs/`` anew: for
    a rerun after a change to the tests only. Refused when ``host/`` has changed since."""
    repository, directory = pathlib.Path(repository), pathlib.Path(directory)
    if not (directory / "mutants").is_dir():
        raise SystemExit(f"no staging tree with mutants in {directory} to keep")
    if not _same_tree(repository / "host", directory / "matndp" / "host"):
        raise SystemExit("host/ changed since the staging tree was made: run without --keep-stage")
    for name in ("tests", "docs"):
        for root in (directory, directory / "mutants"):
            shutil.rmtree(root / name)
            shutil.copytree(repository / name, root / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _write_configuration(repository, directory)
    # Which tests reach which function is recorded anew, for the tests as they are now.
    (directory / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    return directory


def _recheck(directory, name):
    """Whether survivor ``name`` fails the tests of its module when applied to the staged
    source and run in a fresh interpreter (None when no test reaches the module)."""
    # The tests of every function of the mutant's module: code that runs at import is
    # recorded against whichever test happened to import the module first.
    module = name.rpartition(".")[0] + "."
    by_function = json.loads((directory / "mutants" / "mutmut-stats.json").read_text())[
        "tests_by_mangled_function_name"]
    tests = sorted({test for function, reached in by_function.items() if function.startswith(module)
                    for test in reached})
    if not tests:
        return None
    source = directory / "matndp" / "host"
    unmutated = {path: path.read_bytes() for path in source.rglob("*.py")}

    def pytest(*arguments):
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *arguments],
                              cwd=directory, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=_RECHECK_TIMEOUT,
                              env={**os.environ, "PYTHONPATH": str(directory),
                                   "PYTHONDONTWRITEBYTECODE": "1"})

    try:
        applied = _mutmut(directory, "apply", name)
        if applied.returncode:
            raise SystemExit(f"mutmut apply {name} failed:\n{applied.stdout}")
        try:
            result = pytest("-x", "-q", *tests)
        except subprocess.TimeoutExpired:
            return False          # not shown to fail: it stays a survivor
    finally:
        for path, text in unmutated.items():
            path.write_bytes(text)
    if result.returncode in (0, 1):
        return result.returncode == 1
    # The tests could not be collected: a kill if they can be without the mutant.
    clean = pytest("--collect-only", "-q", *tests)
    if clean.returncode:
        raise SystemExit(f"recheck of {name}: its tests do not collect even unmutated:\n"
                         f"{clean.stdout[-3000:]}")
    return True


RECHECK_KILL = "killed in a fresh interpreter (code that runs at import)"
_RECHECK_TIMEOUT = int(os.environ.get("MATNDP_MUTATE_RECHECK_TIMEOUT", 900))


def _draw_record(directory):
    return pathlib.Path(directory) / "draw.json"


def run(repository, directory, *, size, seed, children, command, seen, source="", rerun=False):
    """Stage and generate the mutants, draw ``size`` of those not ``seen`` (fingerprints of
    mutants earlier runs drew) by ``seed`` (None: run all), and run them with ``children``
    workers; returns the :class:`~.results.Run`. ``rerun``: the last run's draw again on
    its staging tree (:func:`refresh`), after tests were written for it."""
    directory = pathlib.Path(directory)
    if rerun:
        record = json.loads(_draw_record(refresh(repository, directory)).read_text())
        record.update(rerun=True, started=history.now(), source=source, command=command)
        chosen = sorted(record["fingerprints"])
    else:
        stage(repository, directory)
        mutant_names(directory, children)
        fingerprints = identity.fingerprints(directory)
        stale = [name for name in EQUIVALENT_MUTANTS
                 if equivalence(name, _mutmut(directory, "show", name).stdout) is None]
        if stale:
            print(f"host: equivalence claims whose name now makes another change (they no "
                  f"longer apply): {', '.join(stale)}", flush=True)
        chosen = draw(fingerprints, size, seed, seen)
        record = {"seed": seed, "sample": "all" if size is None else size,
                  "started": history.now(), "source": source, "command": command, "population": len(fingerprints),
                  "seen_before": sum(print_ in seen for print_ in fingerprints.values()),
                  "fingerprints": {name: fingerprints[name] for name in chosen}}
    record["seen"] = sorted(name for name in chosen if record["fingerprints"][name] in seen)
    _draw_record(directory).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    what = "a rerun of the last draw" if rerun else f"seed {record['seed']}"
    print(f"host: {what}; {record['population']} mutants, {record['seen_before']} drawn by earlier "
          f"runs; running {len(chosen)}, {len(chosen) - len(record['seen'])} of them fresh; "
          f"log in {directory / 'mutmut.log'}", flush=True)
    with open(directory / "mutmut.log", "w") as log:
        result = _mutmut(directory, "run", "--max-children", str(children), *chosen, log=log)
    if result.returncode:
        raise SystemExit(f"mutmut run failed (exit {result.returncode}); see {directory / 'mutmut.log'}")
    return collect(directory)


def collect(directory, *, partial=False, rechecked=None):
    """The :class:`~.results.Run` of the draw the staging tree records; with ``partial``,
    the mutants mutmut had not yet checked (a run stopped early) are left out.
    ``rechecked``: whether each survivor failed in a fresh interpreter, as an earlier
    collection of the same draw found (those not in it are run again)."""
    from mutmut.stats import status_by_exit_code

    directory = pathlib.Path(directory)
    record = json.loads(_draw_record(directory).read_text())
    chosen = sorted(record["fingerprints"])
    codes = {}
    for meta in _meta_files(directory):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    statuses = {name: status_by_exit_code[codes[name]] for name in chosen}
    unchecked = [name for name, status in statuses.items() if status == "not checked"]
    if unchecked and not partial:
        raise SystemExit(f"mutmut left {len(unchecked)} mutants unchecked; see {directory / 'mutmut.log'}")
    chosen = [name for name in chosen if name not in unchecked]
    rechecked = dict(rechecked or {})
    survivors = [name for name in chosen if statuses[name] == "survived" and name not in rechecked]
    # One at a time: each applies its mutant to the one staged source.
    with ThreadPoolExecutor(max_workers=1) as pool:
        rechecked.update(zip(survivors, pool.map(lambda name: _recheck(directory, name), survivors)))
    seen = set(record["seen"])
    outcomes = []
    for name in chosen:
        status = statuses[name]
        outcome, note, change = outcome_of(status), "", ""
        if status == "survived" and rechecked.get(name):
            outcome, note = KILLED, RECHECK_KILL
        if outcome == SURVIVED:
            change = _mutmut(directory, "show", name).stdout.strip()
            argument = equivalence(name, change)
            if argument is not None:
                outcome, note = EQUIVALENT, argument
            elif status != "survived":
                note = status
        outcomes.append(Outcome(name, part_of(name), outcome, change, note,
                                record["fingerprints"][name], name in seen))
    command = record["command"]
    if unchecked:
        command += f"  (stopped early: {len(unchecked)} of the {len(chosen) + len(unchecked)} drawn unchecked)"
    draw_ = {key: record[key] for key in ("seed", "sample", "started", "source", "seen_before")}
    if record.get("rerun"):
        draw_["rerun"] = True
    draw_["drawn"] = sorted(record["fingerprints"].values())
    return Run("host", command, record["population"], outcomes, draw_, len(unchecked))
