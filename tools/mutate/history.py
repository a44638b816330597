"""The record of every mutation run, kept in the repository (``docs/mutation-runs.json``).

A kill rate means something only on mutants nobody has looked at: once the survivors of a
sample have been read and tests written against them, that sample measures the tests
written for it. So every host run records the fingerprints (:mod:`.identity`) of all the
mutants it drew, and the next sample is drawn from the others. The record is committed,
not kept under ``build/``, because the mutants already drawn are a fact about the
repository's tests, which a fresh clone must exclude as much as the machine that ran them.
Each entry also holds the run's summary (seed, source, counts, kill rate per part) and its
survivors and equivalent mutants with their change: the generated section of
docs/testing.md is made from this record alone. The full outcomes of a run, killed mutants
included, are kept under ``build/mutate/runs/``.
"""

import datetime
import json
import pathlib
import subprocess

from .results import EQUIVALENT, KILLED, SURVIVED


__all__ = ["load", "save", "seen", "entry", "append", "now", "revision"]


def load(path):
    """The recorded runs, oldest first (none when ``path`` does not exist)."""
    path = pathlib.Path(path)
    return json.loads(path.read_text())["runs"] if path.exists() else []


def save(path, runs):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"runs": runs}, indent=1, ensure_ascii=False)
    path.write_text(text + "\n")


def seen(runs):
    """The fingerprints of every host mutant a recorded run drew (those of a run stopped
    early included: its survivors so far may have been read)."""
    return {fingerprint for run in runs if run["kind"] == "host" for fingerprint in run.get("drawn", ())}


def _listed(outcomes):
    return [{"name": o.name, "change": o.change, "note": o.note, "seen": o.seen} for o in outcomes]


def entry(run):
    """The record of ``run`` (a :class:`~.results.Run`). Its counts and rate are over the
    mutants no earlier run had drawn when it has any (a fresh sample has nothing else),
    over all it ran otherwise (a rerun of a sample after tests were written for it)."""
    fresh = run.fresh > 0
    parts = {part: [sum(o.part == part and not (fresh and o.seen) for o in run.outcomes),
                    run.count(KILLED, part, fresh=fresh), run.count(SURVIVED, part, fresh=fresh),
                    run.count(EQUIVALENT, part, fresh=fresh)]
             for part in run.parts()}
    record = {
        "kind": run.kind,
        "command": run.command,
        **run.draw,
        "population": run.population,
        "ran": len(run.outcomes),
        "unchecked": run.unchecked,
        "fresh": run.fresh,
        "counted": "fresh" if fresh else "all",
        "killed": run.count(KILLED, fresh=fresh),
        "survived": run.count(SURVIVED, fresh=fresh),
        "equivalent": run.count(EQUIVALENT, fresh=fresh),
        "parts": parts,
        "survivors": _listed(o for o in run.outcomes if o.outcome == SURVIVED),
        "equivalents": _listed(o for o in run.outcomes if o.outcome == EQUIVALENT),
    }
    if "drawn" in record:                # last: the longest field
        record["drawn"] = record.pop("drawn")
    return record


def append(path, run):
    """Record ``run`` after the runs already in ``path``, or in place of the record of the
    same run (collected again); returns its entry."""
    record = entry(run)
    same = lambda other: (other["kind"], other.get("started")) == (record["kind"], record.get("started"))
    runs = load(path)
    at = next((index for index, other in enumerate(runs) if same(other)), len(runs))
    runs[at:at + 1] = [record]
    save(path, runs)
    return record


def now():
    """The time, UTC, to the second: when a run starts."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def revision(repository):
    """The commit the run is made on, ``+changes`` when the models, the tests or the tools
    differ from it."""
    git = lambda *arguments: subprocess.run(["git", *arguments], cwd=repository, text=True,
                                            capture_output=True).stdout.strip()
    commit = git("rev-parse", "--short=12", "HEAD")
    changed = git("status", "--porcelain", "--", "host", "hw", "tests", "tools")
    return commit + ("+changes" if changed else "")
