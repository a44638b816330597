"""``matndp soc-sim``: the slice with its engine in a LiteX SoC under Verilator, the
firmware running library kernels through it (docs/fpga.md, "The slice in a LiteX SoC");
``matndp soc``: the same SoC on a ULX3S 85F board, built to a bitstream (docs/fpga.md,
"Run it on a board")."""

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


def _board_command_line(args):
    words = ["soc", "--build", str(args.build), "--seed", str(args.seed)]
    words += ["--clock-mhz", str(args.clock_mhz)] if args.clock_mhz is not None else []
    words += ["--route-timeout", f"{args.route_timeout:g}"]
    words += ["--gateware-only"] * args.gateware_only + ["--json"] * args.json
    words += ["-v"] * args.verbose
    return words + (["--output", str(args.output)] if args.output else [])


def _with_hash_seed(words):
    """Run this command again as ``matndp WORDS`` with :data:`HASH_SEED`, unless it runs so."""
    if os.environ.get("PYTHONHASHSEED") != HASH_SEED:
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, "-m", "matndp.sim.cli", *words],
                  {**os.environ, "PYTHONHASHSEED": HASH_SEED})


def run_soc_sim(args):
    from matndp.sim.cli.output import UsageError, tool_output, write_result
    from matndp.sim.soc.flow import missing_tools, simulate_soc
    missing = missing_tools()
    if missing:
        raise UsageError(f"soc-sim needs {', '.join(missing)}; make soc-setup installs them")
    _with_hash_seed(_command_line(args))
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


def run_soc(args):
    import shlex
    from matndp.sim.cli.output import UsageError, tool_output, write_result
    from matndp.sim.soc.bitstream import build_board_soc, clock_verdict, missing_board_tools
    missing = missing_board_tools()
    if missing:
        raise UsageError(f"soc needs {', '.join(missing)}; make setup and make soc-setup "
                         f"install them")
    _with_hash_seed(_board_command_line(args))
    command = shlex.join(["matndp", *_board_command_line(args)])
    with tool_output("soc", args.verbose):
        build = build_board_soc(args.build, seed=args.seed, clock_mhz=args.clock_mhz,
                                gateware_only=args.gateware_only, command=command,
                                route_timeout_s=args.route_timeout)
    report = build.report
    document = {"gateware": str(build.gateware), "seconds": round(build.seconds, 1),
                "files": {role: str(path) for role, path in build.files.items()},
                "report": report}
    if not write_result(args, document):
        if report is None:
            print(f"soc: gateware in {build.gateware} ({build.files['verilog'].name}, "
                  f"{build.files['constraints'].name}, {build.files['yosys_script'].name}); "
                  f"{build.seconds:.0f} s")
        else:
            resources = report["resources"]
            share = 100 * resources["lut"]["used"] / resources["lut"]["available"]
            print(f"soc: {build.files['bitstream']}; {resources['lut']['used']} LUT4 "
                  f"({share:.1f} %), {resources['ff']['used']} FF, {resources['dsp']['used']} DSP, "
                  f"{resources['bram']['used']} BRAM; sys clock {report['fmax_mhz']:.1f} MHz "
                  f"({clock_verdict(report)}); {build.seconds / 60:.0f} min")
    return 0


def register(subparsers):
    from matndp.sim.cli.arguments import integer, number
    from matndp.sim.cli.output import add_result_options, output_folder
    from matndp.sim.cli.synth import NEXTPNR_SEEDS
    from matndp.sim.soc.bitstream import ROUTE_TIMEOUT_SECONDS
    from matndp.sim.soc.board import CLOCK_RANGE_MHZ, SYSTEM_CLOCK
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

    board = subparsers.add_parser(
        "soc", help="build the LiteX SoC around the slice for a ULX3S 85F board, to a bitstream",
        description="Generate the soc-sim SoC for the ULX3S board with an LFE5U-85F (ECP5 PLL "
                    "to the system clock, 50 MHz unless --clock-mhz says otherwise, the "
                    "board's SDR SDRAM, its FTDI UART) with the firmware in ROM, then "
                    "synthesize (Yosys synth_ecp5), place and route (nextpnr-ecp5) and pack "
                    "(ecppack) it to FOLDER/gateware/matndp_soc.bit; "
                    "writes FOLDER/soc.json and FOLDER/soc.md (resources, system clock Fmax). "
                    "Takes hours; needs make soc-setup.")
    board.add_argument("--build", type=output_folder, default="build/soc/board", metavar="FOLDER",
                       help="where the gateware, firmware, bitstream and report go "
                            "(default %(default)s)")
    board.add_argument("--seed", type=integer(*NEXTPNR_SEEDS), default=1,
                       help="nextpnr placement seed")
    board.add_argument("--clock-mhz", type=integer(*CLOCK_RANGE_MHZ), default=None,
                       metavar="MHZ",
                       help="build for this system clock instead of the design's target "
                            f"(default {SYSTEM_CLOCK // 10**6}): a bitstream that meets timing "
                            "where the design misses its target; the report judges both")
    board.add_argument("--route-timeout", type=number("route timeout", unit="s"),
                       default=ROUTE_TIMEOUT_SECONDS, metavar="SECONDS",
                       help="give up when nextpnr has not finished after this long, saying "
                            "where its routing stood (exit 1; default %(default)s)")
    board.add_argument("--gateware-only", action="store_true",
                       help="stop once the Verilog, the pin constraints and the tools' scripts "
                            "are written (no synthesis, place and route or bitstream)")
    add_result_options(board, "the build's files and report")
    board.set_defaults(func=run_soc)
