"""Hardware-flow sub-commands: ``export``, ``lint``, ``sim``, ``bench``."""

import pathlib


def run_export(args):
    from hw.export import export_verilog
    from hw.ndp_slice import NDPSlice
    from .runner import write_if_changed
    path = write_if_changed(args.output, export_verilog(NDPSlice(), "ndp_slice"))
    print(f"wrote {path}")
    return 0


def run_lint(args):
    from .lint import lint
    return lint(pathlib.Path(args.verilog))


def run_bench(args):
    from .bench import run_benchmarks
    run_benchmarks(args.output, names=args.only, quick=args.quick)
    return 0


def register(subparsers):
    export = subparsers.add_parser("export", help="export the NDP slice as Verilog",
                                   description="Write reproducible Verilog of the NDP slice.")
    export.add_argument("--output", default="build/verilog/ndp_slice.v")
    export.set_defaults(func=run_export)

    lint = subparsers.add_parser("lint", help="Verilator --lint-only on exported Verilog",
                                 description="Lint exported Verilog with Verilator; waivers "
                                             "and their reasons are in sim/lint_waivers.vlt.")
    lint.add_argument("verilog")
    lint.set_defaults(func=run_lint)

    bench = subparsers.add_parser("bench", help="run the performance benchmarks",
                                  description="Run benchmarks; JSON per benchmark under --output.")
    bench.add_argument("--output", default="build/bench")
    bench.add_argument("--only", nargs="*", metavar="NAME", help="run only these benchmarks")
    bench.add_argument("--quick", action="store_true", help="smaller problem sizes")
    bench.set_defaults(func=run_bench)
