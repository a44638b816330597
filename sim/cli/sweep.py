"""``matndp sweep SPEC.toml``: run a design-space sweep (docs/sweep.md)."""

import pathlib
import sys

from matndp.sim.cli.arguments import integer


def run_sweep(args):
    from matndp.sim.sweep import LocalPool, RayCluster, load_spec, run_sweep
    spec = load_spec(args.spec)
    output = args.output or pathlib.Path("build/sweep") / (pathlib.Path(args.spec).stem + ".jsonl")
    runner = RayCluster(args.ray, args.jobs) if args.ray else LocalPool(args.jobs)
    try:
        summary = run_sweep(spec, output, runner, progress=not args.no_progress,
                            plot=not args.no_plot, retry_failed=args.retry_failed)
    except KeyboardInterrupt:
        print(f"\nsweep: interrupted; the points that finished are in {output}, and the "
              f"same command resumes from them", file=sys.stderr)
        return 130
    print(summary.line(), file=sys.stderr)
    return 1 if summary.failed else 0


def run_points(args):
    from matndp.sim.sweep.registry import POINT_FUNCTIONS
    from matndp.sim.sweep.interface import REQUIRED
    for function in POINT_FUNCTIONS.values():
        print(f"{function.name}: {function.help}")
        for parameter in function.parameters:
            if parameter.default is REQUIRED:
                default = " (required)"
            elif parameter.default is None:
                default = ""
            else:
                default = f" (default {parameter.default!r})"
            print(f"  {parameter.name:26s} {parameter.help}{default}")
    return 0


def register(subparsers):
    parser = subparsers.add_parser(
        "sweep", help="run a design-space sweep from a TOML specification",
        description="Run every point of a sweep specification (a point function, fixed "
                    "parameters, axes, seeds; see docs/sweep.md) on a local process pool or a "
                    "Ray cluster, appending one JSON line per point to --output and drawing a "
                    "summary plot beside it. Points already in --output are skipped. Exit "
                    "status 1 when a point failed (its line says why), 2 for a bad "
                    "specification.")
    parser.add_argument("spec", nargs="?", help="the sweep specification (TOML)")
    parser.add_argument("--output", default=None,
                        help="JSON-lines file of the results (default build/sweep/SPEC.jsonl); "
                             "the plot goes beside it as .png")
    parser.add_argument("--jobs", type=integer(1), default=2,
                        help="worker processes of the local pool; CPUs of --ray local "
                             "(default %(default)s)")
    parser.add_argument("--ray", metavar="ADDRESS|auto|local", default=None,
                        help="run on the Ray cluster at ADDRESS, the one this machine is part "
                             "of (auto), or a Ray instance started here with --jobs CPUs (local)")
    parser.add_argument("--retry-failed", action="store_true",
                        help="run points whose line in --output is a failure again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--no-plot", action="store_true", help="no summary plot")
    parser.add_argument("--list-points", action="store_true",
                        help="list the point functions and their parameters, and exit")
    parser.set_defaults(func=_dispatch)


def _dispatch(args):
    if args.list_points:
        return run_points(args)
    if args.spec is None:
        from matndp.sim.cli import UsageError
        raise UsageError("give a sweep specification (SPEC.toml), or --list-points")
    return run_sweep(args)
