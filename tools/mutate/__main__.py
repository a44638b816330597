"""``python -m tools.mutate``: the mutation runs behind ``make mutate`` (docs/testing.md).

  host    mutmut over host/: a sample drawn by a new seed from the mutants no earlier run
          drew (or --seed, or --all)
  rtl     the catalog of RTL mutants over hw/ (tools/mutate/rtl_mutants.py)
  report  the generated section of docs/testing.md from the record of runs

Every run is recorded in docs/mutation-runs.json (summary, survivors, the mutants drawn)
and kept whole in build/mutate/runs/.
"""

import argparse
import json
import pathlib
import random
import shlex
import sys

from . import history, host, report, rtl
from .results import KILLED, load_run


REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
BUILD = REPOSITORY / "build" / "mutate"
HISTORY = REPOSITORY / "docs" / "mutation-runs.json"
RESULTS = {"host": BUILD / "host.json", "rtl": BUILD / "rtl.json"}


def _count(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _seed(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _parser():
    parser = argparse.ArgumentParser(prog="python -m tools.mutate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    host_command = commands.add_parser("host", help="mutmut over host/")
    chosen = host_command.add_mutually_exclusive_group()
    chosen.add_argument("--sample", type=_count, default=300,
                        help="mutants to draw from those no earlier run drew (default 300)")
    chosen.add_argument("--all", action="store_true", help="run every mutant, drawn before or not")
    host_command.add_argument("--seed", type=_seed,
                              help="the seed of the draw (default: a new one, printed)")
    host_command.add_argument("--jobs", type=_count, default=2, help="mutmut workers (default 2)")
    again = host_command.add_mutually_exclusive_group()
    again.add_argument("--rerun", action="store_true",
                       help="run the last draw again on its staging tree and mutmut's records "
                            "(after a change to tests/ only); counted as seen, not fresh")
    again.add_argument("--collect", action="store_true",
                       help="record again what the staging tree holds of the last run "
                            "(after a change to the equivalence arguments)")
    again.add_argument("--collect-partial", action="store_true",
                       help="record what the staging tree holds of a run stopped early, "
                            "leaving out the mutants not yet checked")
    rtl_command = commands.add_parser("rtl", help="the RTL mutant catalog over hw/")
    rtl_command.add_argument("--only", nargs="+", metavar="ID", help="run only these mutants")
    rtl_command.add_argument("--jobs", type=_count, default=1, help="mutants at once (default 1)")
    commands.add_parser("report", help="rewrite the generated section of docs/testing.md")
    return parser


def _rechecked(results, directory):
    """What the last collection of the staging tree's draw found when it ran each survivor
    in a fresh interpreter (nothing when the results are of another draw)."""
    if not results.exists():
        return {}
    last = load_run(results)
    draw = json.loads((directory / "draw.json").read_text())
    if last.draw.get("started") != draw["started"]:
        return {}
    return {o.name: o.note == host.RECHECK_KILL for o in last.outcomes
            if o.outcome != KILLED or o.note == host.RECHECK_KILL}


def _keep(result):
    """Keep ``result`` whole under build/mutate/ and record it in the history."""
    result.save(RESULTS[result.kind])
    stamp = result.draw["started"].replace(":", "").replace("-", "")
    seed = f"-seed{result.draw['seed']}" if result.draw.get("seed") is not None else ""
    rerun = "-rerun" if result.draw.get("rerun") else ""
    path = BUILD / "runs" / f"{stamp}-{result.kind}{seed}{rerun}.json"
    if path.exists():          # collected again: the first collection stays beside it
        again = history.now().replace(":", "").replace("-", "")
        path = path.with_name(f"{path.stem}-collected{again}.json")
    result.save(path)
    history.append(HISTORY, result)


def main(argv=None):
    arguments = _parser().parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    if arguments.command == "host":
        if arguments.collect or arguments.collect_partial:
            result = host.collect(BUILD / "host", partial=arguments.collect_partial,
                                  rechecked=_rechecked(RESULTS["host"], BUILD / "host"))
        else:
            seed = arguments.seed
            if seed is None and not (arguments.rerun or arguments.all):
                seed = random.SystemRandom().randrange(1, 1_000_000)
            # the command that reproduces the draw names its seed
            command = "python -m tools.mutate " + " ".join(map(shlex.quote, argv))
            if seed is not None and arguments.seed is None:
                command += f" --seed {seed}"
            print(f"host: seed {seed}" if seed is not None else "host: every mutant", flush=True)
            result = host.run(REPOSITORY, BUILD / "host", size=None if arguments.all else arguments.sample,
                              seed=seed, children=arguments.jobs, command=command,
                              seen=history.seen(history.load(HISTORY)),
                              source=history.revision(REPOSITORY), rerun=arguments.rerun)
        _keep(result)
    elif arguments.command == "rtl":
        command = "python -m tools.mutate " + " ".join(map(shlex.quote, argv))
        result = rtl.run(REPOSITORY, BUILD / "rtl", only=arguments.only, jobs=arguments.jobs,
                         command=command)
        if not arguments.only:
            result.draw.update(started=history.now(), source=history.revision(REPOSITORY))
            _keep(result)
    else:
        runs = history.load(HISTORY)
        report.write(REPOSITORY / "docs" / "testing.md", runs)
        latest = report.latest(runs)
        for entry in latest:
            print(report.summary(entry))
        return 0 if latest and all(report.meets_target(entry) for entry in latest) else 1
    print(report.summary(history.entry(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
