"""``matndp bench``: the performance benchmarks (docs/benchmarks.md)."""

from matndp.sim.cli.output import UsageError, output_folder, tool_output


def run_bench(args):
    from matndp.sim.bench import BENCHMARKS, run_benchmarks
    from matndp.sim.bench.summary import summary_table
    unknown = [name for name in args.only or () if name not in BENCHMARKS]
    if unknown:
        raise UsageError(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    with tool_output("bench", args.verbose) as tools:
        written = run_benchmarks(args.output, names=args.only, quick=args.quick, progress=tools.step)
    print(summary_table(written))
    return 0


def register(subparsers):
    bench = subparsers.add_parser("bench", help="run the performance benchmarks",
                                  description="Run benchmarks; JSON per benchmark under --output, "
                                              "then a table of the headline figures against "
                                              "their targets.")
    bench.add_argument("--output", type=output_folder, default="build/bench", metavar="FOLDER",
                       help="folder for one JSON file per benchmark")
    bench.add_argument("--only", nargs="*", metavar="NAME", help="run only these benchmarks")
    bench.add_argument("--quick", action="store_true", help="smaller problem sizes")
    bench.set_defaults(func=run_bench)
