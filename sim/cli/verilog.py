"""``matndp export`` and ``matndp lint``: reproducible Verilog of the designs an FPGA
prototype takes, and Verilator's lint over it."""

import pathlib

from matndp.hw.config import NAMED_CONFIGS
from matndp.sim.cli.output import output_file, wrote


# Designs `matndp export` writes: name -> (module name, a function that builds it).
def _slice(pipelined=False):
    from matndp.hw.ndp_slice import NDPSlice
    from matndp.sim.designs import PIPELINED_TRIGGER_SLICE
    return "ndp_slice", NDPSlice(PIPELINED_TRIGGER_SLICE if pipelined else None)


def _axi_slice(pipelined=False, config=None):
    from matndp.hw.fpga.top import AXISlice
    from matndp.sim.designs import AXI_SLICE_MODULE, PIPELINED_TRIGGER_SLICE, TRIGGER_SLICE
    if config is None:
        return AXI_SLICE_MODULE, AXISlice(PIPELINED_TRIGGER_SLICE if pipelined else TRIGGER_SLICE)
    return AXI_SLICE_MODULE, AXISlice(_pipelined(config) if pipelined else config)


def _pipelined(config):
    import dataclasses
    return dataclasses.replace(config, trigger=dataclasses.replace(config.trigger, pipelined=True))


def _axi_expander():
    from matndp.sim.designs import AXI_EXPANDER_MODULE, EXPANDER_CONFIG, EXPANDER_PORTS
    from matndp.hw.fpga.expander_top import AXIExpander
    return AXI_EXPANDER_MODULE, AXIExpander(EXPANDER_CONFIG, EXPANDER_PORTS)


EXPORTS = {"slice": _slice, "axi": _axi_slice, "expander-axi": _axi_expander,
           "slice-pipelined": lambda: _slice(pipelined=True),
           "axi-pipelined": lambda: _axi_slice(pipelined=True)}
# Designs that take --config: the AXI top around the slice of a named configuration
# (hw/config.py) instead of the trigger alone.
CONFIGURABLE = {"axi": lambda config: _axi_slice(config=config),
                "axi-pipelined": lambda config: _axi_slice(pipelined=True, config=config)}


def run_export(args):
    import sys
    from matndp.hw.export import export_verilog
    from matndp.sim.runner import write_if_changed
    from matndp.sim.cli.output import UsageError
    config = None
    if args.config is not None:
        if args.design not in CONFIGURABLE:
            raise UsageError(f"--config applies to --design {' or '.join(CONFIGURABLE)}, "
                             f"not {args.design}")
        from matndp.hw.config import named_config
        config = named_config(args.config)
    # Elaborating a design with its engine takes tens of seconds: say so first.
    print(f"export: elaborating the {args.design} design and writing its Verilog", file=sys.stderr,
          flush=True)
    if config is None:
        name, design = EXPORTS[args.design]()
    else:
        name, design = CONFIGURABLE[args.design](config)
    path = write_if_changed(args.output, export_verilog(design, name))
    wrote(path, f" (module {name})")
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
    export.add_argument("--config", choices=list(NAMED_CONFIGS), default=None,
                        help="the AXI top (--design axi, axi-pipelined) around the slice of "
                             "this named configuration, engine included (default: the "
                             "trigger alone)")
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
