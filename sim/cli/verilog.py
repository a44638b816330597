"""``matndp export`` and ``matndp lint``: reproducible Verilog of the designs an FPGA
prototype takes, and Verilator's lint over it."""

import pathlib

from matndp.sim.cli.output import output_file


# Designs `matndp export` writes: name -> (module name, a function that builds it).
def _slice(pipelined=False):
    from matndp.hw.ndp_slice import NDPSlice
    from matndp.sim.designs import PIPELINED_TRIGGER_SLICE
    return "ndp_slice", NDPSlice(PIPELINED_TRIGGER_SLICE if pipelined else None)


def _axi_slice(pipelined=False):
    from matndp.hw.fpga.top import AXISlice
    from matndp.sim.designs import AXI_SLICE_MODULE, PIPELINED_TRIGGER_SLICE, TRIGGER_SLICE
    return AXI_SLICE_MODULE, AXISlice(PIPELINED_TRIGGER_SLICE if pipelined else TRIGGER_SLICE)


def _axi_expander():
    from matndp.sim.designs import AXI_EXPANDER_MODULE, EXPANDER_CONFIG, EXPANDER_PORTS
    from matndp.hw.fpga.expander_top import AXIExpander
    return AXI_EXPANDER_MODULE, AXIExpander(EXPANDER_CONFIG, EXPANDER_PORTS)


EXPORTS = {"slice": _slice, "axi": _axi_slice, "expander-axi": _axi_expander,
           "slice-pipelined": lambda: _slice(pipelined=True),
           "axi-pipelined": lambda: _axi_slice(pipelined=True)}


def run_export(args):
    from matndp.hw.export import export_verilog
    from matndp.sim.runner import write_if_changed
    name, design = EXPORTS[args.design]()
    path = write_if_changed(args.output, export_verilog(design, name))
    print(f"wrote {path}")
    return 0


def run_lint(args):
    from matndp.sim.fpga_flow.lint import lint
    return lint(pathlib.Path(args.verilog), top=args.top)


def register(subparsers):
    export = subparsers.add_parser("export", help="export the NDP slice or an AXI top as Verilog",
                                   description="Write reproducible Verilog of the NDP slice "
                                               "(--design slice), of the FPGA top with AXI4 "
                                               "and AXI4-Lite ports around the slice of the "
                                               "trigger alone (--design axi), or of the memory "
                                               "expander's FPGA top: four GPU-side AXI4 slaves "
                                               "around the expander slice (--design "
                                               "expander-axi). The slice and the AXI top "
                                               "with the trigger's request side pipelined "
                                               "(the FPGA build, docs/trigger.md): "
                                               "--design slice-pipelined, axi-pipelined.")
    export.add_argument("--design", choices=list(EXPORTS), default="slice",
                        help="which design (default %(default)s)")
    export.add_argument("--output", type=output_file, default="build/verilog/ndp_slice.v",
                        metavar="FILE", help="the Verilog file to write")
    export.set_defaults(func=run_export)

    lint = subparsers.add_parser("lint", help="Verilator --lint-only on exported Verilog",
                                 description="Lint exported Verilog with Verilator; waivers "
                                             "and their reasons are in sim/fpga_flow/lint_waivers.vlt.")
    lint.add_argument("verilog", help="exported Verilog (make verilog writes "
                                      "build/verilog/ndp_slice.v)")
    lint.add_argument("--top", default="ndp_slice", help="top module (default ndp_slice)")
    lint.set_defaults(func=run_lint)
