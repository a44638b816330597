"""``python -m tools.mutate``: the mutation runs behind ``make mutate`` (docs/testing.md).

  host    mutmut over host/ (a seeded sample, or --all)
  rtl     the catalog of RTL mutants over hw/ (tools/mutate/rtl_mutants.py)
  report  the generated section of docs/testing.md from the last runs' results
"""

import argparse
import pathlib
import shlex
import sys

from . import host, report, rtl
from .results import load_run


REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
BUILD = REPOSITORY / "build" / "mutate"
RESULTS = {"host": BUILD / "host.json", "rtl": BUILD / "rtl.json"}


def _count(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _parser():
    parser = argparse.ArgumentParser(prog="python -m tools.mutate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    host_command = commands.add_parser("host", help="mutmut over host/")
    chosen = host_command.add_mutually_exclusive_group()
    chosen.add_argument("--sample", type=_count, default=300, help="mutants to run (default 300)")
    chosen.add_argument("--all", action="store_true", help="run every mutant")
    host_command.add_argument("--seed", type=int, default=1, help="sample seed (default 1)")
    host_command.add_argument("--jobs", type=_count, default=2, help="mutmut workers (default 2)")
    host_command.add_argument("--keep-stage", action="store_true",
                              help="reuse the last run's staging tree and mutmut's records "
                                   "(after a change to tests/ only)")
    host_command.add_argument("--collect-partial", action="store_true",
                              help="report what the staging tree records of a run stopped "
                                   "early, leaving out the mutants not yet checked")
    rtl_command = commands.add_parser("rtl", help="the RTL mutant catalog over hw/")
    rtl_command.add_argument("--only", nargs="+", metavar="ID", help="run only these mutants")
    rtl_command.add_argument("--jobs", type=_count, default=1, help="mutants at once (default 1)")
    commands.add_parser("report", help="rewrite the generated section of docs/testing.md")
    return parser


def main(argv=None):
    arguments = _parser().parse_args(argv)
    command = "python -m tools.mutate " + " ".join(map(shlex.quote, argv if argv is not None
                                                        else sys.argv[1:]))
    if arguments.command == "host":
        size = None if arguments.all else arguments.sample
        if arguments.collect_partial:
            result = host.collect(REPOSITORY, BUILD / "host", size=size, seed=arguments.seed,
                                  command=command, children=arguments.jobs, partial=True)
            result.save(RESULTS["host"])
            print(report.summary(result))
            return 0
        result = host.run(REPOSITORY, BUILD / "host", size=size, seed=arguments.seed,
                          children=arguments.jobs, command=command, keep_stage=arguments.keep_stage)
        result.save(RESULTS["host"])
    elif arguments.command == "rtl":
        result = rtl.run(REPOSITORY, BUILD / "rtl", only=arguments.only, jobs=arguments.jobs,
                         command=command)
        if arguments.only:
            print(report.summary(result))
            return 0
        result.save(RESULTS["rtl"])
    else:
        runs = [load_run(path) for path in RESULTS.values() if path.exists()]
        report.write(REPOSITORY / "docs" / "testing.md", runs)
        for result in runs:
            print(report.summary(result))
        return 0 if all(report.meets_target(result) for result in runs) else 1
    print(report.summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
