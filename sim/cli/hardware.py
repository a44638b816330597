"""Hardware-flow sub-commands: ``export``, ``lint``, ``sim``, ``bench``."""

import argparse
import pathlib

from .arguments import SEED, integer
from .output import output_file, output_folder, tool_output


# Designs `matndp export` writes: name -> (module name, a function that builds it).
def _slice():
    from matndp.hw.ndp_slice import NDPSlice
    return "ndp_slice", NDPSlice()


def _axi_slice():
    from matndp.hw.fpga.top import AXISlice
    from ..designs import AXI_SLICE_MODULE, TRIGGER_SLICE
    return AXI_SLICE_MODULE, AXISlice(TRIGGER_SLICE)


EXPORTS = {"slice": _slice, "axi": _axi_slice}


def run_export(args):
    from matndp.hw.export import export_verilog
    from ..runner import write_if_changed
    name, design = EXPORTS[args.design]()
    path = write_if_changed(args.output, export_verilog(design, name))
    print(f"wrote {path}")
    return 0


def run_lint(args):
    from ..lint import lint
    return lint(pathlib.Path(args.verilog), top=args.top)


def run_bench(args):
    from ..bench import BENCHMARKS, run_benchmarks
    from ..bench.summary import summary_table
    from .output import UsageError
    unknown = [name for name in args.only or () if name not in BENCHMARKS]
    if unknown:
        raise UsageError(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    with tool_output("bench", args.verbose) as tools:
        written = run_benchmarks(args.output, names=args.only, quick=args.quick, progress=tools.step)
    print(summary_table(written))
    return 0


def register(subparsers):
    export = subparsers.add_parser("export", help="export the NDP slice or its AXI top as Verilog",
                                   description="Write reproducible Verilog of the NDP slice "
                                               "(--design slice) or of the FPGA top with AXI4 "
                                               "and AXI4-Lite ports around the slice of the "
                                               "trigger alone (--design axi).")
    export.add_argument("--design", choices=list(EXPORTS), default="slice",
                        help="which design (default %(default)s)")
    export.add_argument("--output", type=output_file, default="build/verilog/ndp_slice.v",
                        metavar="FILE", help="the Verilog file to write")
    export.set_defaults(func=run_export)

    lint = subparsers.add_parser("lint", help="Verilator --lint-only on exported Verilog",
                                 description="Lint exported Verilog with Verilator; waivers "
                                             "and their reasons are in sim/lint_waivers.vlt.")
    lint.add_argument("verilog", help="exported Verilog (make verilog writes "
                                      "build/verilog/ndp_slice.v)")
    lint.add_argument("--top", default="ndp_slice", help="top module (default ndp_slice)")
    lint.set_defaults(func=run_lint)

    bench = subparsers.add_parser("bench", help="run the performance benchmarks",
                                  description="Run benchmarks; JSON per benchmark under --output, "
                                              "then a table of the headline figures against "
                                              "their targets.")
    bench.add_argument("--output", type=output_folder, default="build/bench", metavar="FOLDER",
                       help="folder for one JSON file per benchmark")
    bench.add_argument("--only", nargs="*", metavar="NAME", help="run only these benchmarks")
    bench.add_argument("--quick", action="store_true", help="smaller problem sizes")
    bench.set_defaults(func=run_bench)

    _register_sim(subparsers)


def run_sim(args):
    from ..flagship import run_flagship
    from ..runner import check_simulator
    from ..flagship_engine import run_engine_flagship
    check_simulator(args.simulator)
    with tool_output("sim", args.verbose) as tools:
        run_flagship(args.output, simulator=args.simulator, tiles=args.tiles, seed=args.seed,
                     pressure=args.pressure, progress=tools.step)
        engine = None
        if args.engine:
            engine = run_engine_flagship(args.output, simulator=args.simulator, seed=args.seed,
                                         pressure=0.2 if args.pressure == "random" else 0.0)
    print((pathlib.Path(args.output) / "report.md").read_text(), end="")
    if engine is None:
        return 0
    print()
    print((pathlib.Path(args.output) / "engine_report.md").read_text(), end="")
    return 0 if engine["passed"] else 1


def _register_sim(subparsers):
    from ..flagship import flagship_tiles
    sim = subparsers.add_parser("sim", help="the flagship waveform run (DNN stream through the RTL)",
                                description="Run a ResNet-50 layer's output stream, mixed with other "
                                            "traffic, through the NDP slice's trigger; then two of the "
                                            "layer's output tensors through the slice with its engine, "
                                            "bias + ReLU and batch-norm statistics computed in flight. "
                                            "Writes FST waveforms, GTKWave save files and reports.")
    sim.add_argument("--simulator", choices=["verilator", "icarus"], default="verilator",
                     help="the HDL simulator")
    sim.add_argument("--output", type=output_folder, default="build/sim", metavar="FOLDER",
                     help="folder for the waveform, the save file, the figure and the report")
    tiles = flagship_tiles()
    sim.add_argument("--tiles", type=integer(1, tiles), default=8,
                     help=f"output tiles of the layer to run, 128x64 each, 1..{tiles} "
                          f"(default %(default)s)")
    sim.add_argument("--seed", type=SEED, default=1, help="traffic and back-pressure seed")
    sim.add_argument("--pressure", choices=["none", "random"], default="random",
                     help="random back-pressure on every stream, or none")
    sim.add_argument("--engine", action=argparse.BooleanOptionalAction, default=True,
                     help="also run the engine part: two of the layer's output tensors through "
                          "the slice with its engine (its first build takes minutes; default on)")
    sim.set_defaults(func=run_sim)
