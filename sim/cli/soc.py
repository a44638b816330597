"""``matndp soc-sim``: the slice with its engine in a LiteX SoC under Verilator, the
firmware running library kernels through it (docs/fpga.md, "The slice in a LiteX SoC")."""

import os
import sys


# migen writes a design's statements and picks its names in an order that follows Python's
# string hashing: with the hash seed fixed, the SoC's Verilog is the same from one run to
# the next, and so its Verilator model is reused.
HASH_SEED = "0"


def _command_line(args):
    words = ["soc-sim", "--build", str(args.build)]
    words += ["--waveform"] * args.waveform + ["--json"] * args.json + ["-v"] * args.verbose
    return words + (["--output", str(args.output)] if args.output else [])


def run_soc_sim(args):
    from matndp.sim.cli.output import UsageError, tool_output, write_result
    from matndp.sim.soc.flow import missing_tools, simulate_soc
    missing = missing_tools()
    if missing:
        raise UsageError(f"soc-sim needs {', '.join(missing)}; make soc-setup installs them")
    if os.environ.get("PYTHONHASHSEED") != HASH_SEED:
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, "-m", "matndp.sim.cli", *_command_line(args)],
                  {**os.environ, "PYTHONHASHSEED": HASH_SEED})
    with tool_output("soc-sim", args.verbose):
        run = simulate_soc(args.build, waveform=args.waveform, log=sys.stdout)
    document = {"passed": run.passed, "kernels": run.total, "ok": run.ok,
                "build_seconds": round(run.build_seconds, 1),
                "run_seconds": round(run.run_seconds, 1), "model_built": run.rebuilt,
                "waveform": None if run.waveform is None else str(run.waveform),
                "results": [{"kernel": k.name, "passed": k.passed, "detail": k.detail,
                             "sectors": k.sectors, "cycles": k.cycles,
                             "dma_cycles": k.dma_cycles} for k in run.kernels]}
    if not write_result(args, document):
        for line in run.lines:
            print(line)
        model = "model built" if run.rebuilt else "model reused"
        print(f"soc-sim: {run.passed} of {run.total} kernels passed; build {run.build_seconds:.0f} s "
              f"({model}), run {run.run_seconds:.0f} s"
              + (f"; waveform {run.waveform}" if run.waveform else ""))
    return 0 if run.ok else 1


def register(subparsers):
    from matndp.sim.cli.output import add_result_options, output_folder
    soc = subparsers.add_parser(
        "soc-sim", help="run the slice with its engine in a LiteX SoC under Verilator",
        description="Build (what changed) and run a LiteX SoC around the AXI top of the slice "
                    "in the fpga configuration: VexRiscv firmware loads library kernels, "
                    "programs filter entries as the runtime does, has a DMA write each "
                    "kernel's tensor through the slice into simulated DDR3, waits for the "
                    "slice's irq and checks the results against the instruction-set "
                    "simulator's. Prints one line per kernel and a summary; exit code 0 "
                    "only if every kernel passed. Needs make soc-setup.")
    soc.add_argument("--build", type=output_folder, default="build/soc", metavar="FOLDER",
                     help="where the SoC, its firmware and its model are built "
                          "(default %(default)s)")
    soc.add_argument("--waveform", action="store_true",
                     help="trace every signal while each kernel runs to "
                          "FOLDER/trace/gateware/sim.fst (a model built for it)")
    add_result_options(soc, "the run's results")
    soc.set_defaults(func=run_soc_sim)
