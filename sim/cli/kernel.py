"""``matndp kernel``: assemble and disassemble NDP kernels; render docs/isa.md; list the
kernel library (and render the generated part of docs/kernels.md); run a library kernel
through the RTL or the instruction-set simulator and check it bit for bit."""

import json
import pathlib
import shutil
import sys

from matndp.sim.cli import UsageError, emit_text
from matndp.sim.cli.arguments import fraction, integer
from matndp.sim.cli.output import output_file, wrote
from matndp.sim.docgen.kernels import trigger_text


def _readable(path):
    path = pathlib.Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    return path


def run_asm(args):
    from matndp.host.kernels.assembler import assemble_file
    from matndp.host.kernels.image import save_image
    source = _readable(args.file)
    output = pathlib.Path(args.output) if args.output else source.with_suffix(".ndpk")
    image = assemble_file(source, instruction_words=args.instruction_words,
                          include_folders=args.include)
    try:
        save_image(image, output)
    except OSError as error:
        raise UsageError(f"{output}: cannot write ({error.strerror})") from None
    sections = ", ".join(f".{section.value} at {start}" for section, start in
                         sorted(image.sections.items(), key=lambda item: item[1]))
    wrote(output, f": kernel {image.name}, {len(image.words)} instructions ({sections})")
    return 0


def run_disasm(args):
    from matndp.host.kernels.disassembler import disassemble
    from matndp.host.kernels.image import load_image
    sys.stdout.write(disassemble(load_image(_readable(args.file))))
    return 0


def run_doc(args):
    from matndp.sim.docgen.isa import render_isa_markdown
    emit_text(render_isa_markdown(), args.output)
    return 0


def render_list(kernels):
    rows = [spec.describe() for spec in kernels.values()]
    width = max(len(row["name"]) for row in rows)
    trigger = max(len(trigger_text(row)) for row in rows)
    lines = [f"{row['name']:<{width}}  {trigger_text(row):<{trigger}}  "
             f"{row['instructions_per_sector']:>3} instructions/sector  "
             f"({row['elements_per_sector']} {row['trigger_dtype']}, "
             f"{row['memory_accesses_per_sector']} memory "
             f"access{'' if row['memory_accesses_per_sector'] == 1 else 'es'}"
             f"{', ordered' if row['ordered'] else ''})  {row['summary']}" for row in rows]
    return "\n".join(lines) + "\n"


def render_ops(ops):
    width = max(len(name) for name in ops)
    return "".join(f"{name:<{width}}  {' → '.join(spec.phases)}\n"
                   for name, spec in ops.items() if len(spec.phases) > 1)


def run_list(args):
    from matndp.host.kernels.library import KERNELS, OPS
    if args.markdown:
        from matndp.sim.docgen.kernels import render_markdown
        sys.stdout.write(render_markdown(KERNELS, OPS))
    elif args.ops:
        sys.stdout.write(render_ops(OPS))
    else:
        sys.stdout.write(render_list(KERNELS))
    return 0


# Problem sizes a run uses when none are given, by the kernel's dimensions.
DEFAULT_SIZES = {"elements": 77, "rows": 7, "channels": 16, "columns": 32}
SIMULATORS = ("verilator", "icarus", "iss")


def _launch(args):
    from matndp.host.kernels.library import LibraryError, kernel
    try:
        spec = kernel(args.name)
    except LibraryError as error:
        raise UsageError(str(error)) from None
    given = {dim: getattr(args, dim) for dim in DEFAULT_SIZES if getattr(args, dim) is not None}
    if len(spec.dims) == 2 and "elements" in given:
        # A two-dimensional kernel given only its element count: rows of the default width.
        rows, width = spec.dims
        if rows in given or width in given:
            raise UsageError(f"kernel {spec.name}: give --elements or --{rows}/--{width}, not both")
        columns = DEFAULT_SIZES[width]
        if given["elements"] % columns:
            raise UsageError(f"kernel {spec.name} is sized by {rows} × {width}: --elements "
                             f"{given['elements']} must be a multiple of {width} {columns} "
                             f"(or give --{rows} and --{width})")
        given = {rows: given["elements"] // columns, width: columns}
    extra = sorted(set(given) - set(spec.dims))
    if extra:
        raise UsageError(f"kernel {spec.name} is sized by {', '.join(spec.dims)}, "
                         f"not {', '.join(extra)}")
    problem = {dim: given.get(dim, DEFAULT_SIZES[dim]) for dim in spec.dims}
    try:
        return spec, problem, spec.launch(problem)
    except LibraryError as error:
        raise UsageError(str(error)) from None


def _dump(directory, inputs, outputs, params, report):
    import numpy as np
    for folder, tensors in (("inputs", inputs), ("outputs", outputs)):
        (directory / folder).mkdir(exist_ok=True)
        for name, values in tensors.items():
            np.save(directory / folder / f"{name}.npy", np.asarray(values))
    (directory / "params.json").write_text(json.dumps(params, indent=2) + "\n")
    (directory / "report.json").write_text(json.dumps(report, indent=2) + "\n")


def _check_pace(args):
    if args.gpu_interval > 1 and args.sim == "iss":
        raise UsageError("--gpu-interval sets the GPU's pace on the RTL; the ISS has none")
    if args.gpu_interval > 1 and args.pressure:
        raise UsageError(f"--gpu-interval {args.gpu_interval} sets the GPU's pace; it cannot be "
                         f"combined with --pressure {args.pressure}")


def run_run(args):
    from matndp.hw.config import named_config, slice_config_name
    from matndp.host.kernels.library.inputs import random_inputs
    from matndp.sim.flows.kernel_run import (differing_elements, reference_outputs,
                                             scratchpad_bases)
    spec, problem, launch = _launch(args)
    if args.config is None:
        args.config = slice_config_name()
    config = named_config(args.config)
    _check_pace(args)
    if args.sim != "iss":
        scratchpad_bases([launch], config)
    if args.waves and not args.dump:
        raise UsageError("--waves needs --dump DIR to write the waveform into")
    dump = pathlib.Path(args.dump) if args.dump else None
    if dump is not None:
        try:
            dump.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UsageError(f"{dump}: cannot create ({error.strerror})") from None

    inputs = random_inputs(launch, args.seed)
    iss_outputs, golden, iss_result = reference_outputs(launch, inputs)
    report = {"kernel": spec.name, "problem": problem,
              "elements": launch.elements(launch.trigger), "simulator": args.sim,
              "seed": args.seed, "triggers": launch.expected_triggers}
    if args.sim == "iss":
        outputs = iss_outputs
        report.update(complete=True, error=None, instructions=iss_result.instructions)
    else:
        from matndp.sim.cli.output import tool_output
        from matndp.sim.designs import ndp_slice_verilog
        from matndp.sim.flows.kernel_run import run_kernel_rtl
        with tool_output("kernel run", args.verbose) as tools:
            tools.step(f"kernel run: exporting the slice with its engine (the {args.config} "
                       f"configuration)")
            ndp_slice_verilog(config, simulator=args.sim)
            tools.step(f"kernel run: {spec.name} ({_sizes(problem)}), {launch.expected_triggers} "
                       f"triggering accesses, through the slice under {args.sim}")
            run = run_kernel_rtl(spec.name, problem, seed=args.seed, simulator=args.sim,
                                 pressure=args.pressure, reorder=args.reorder,
                                 memory_latency=args.memory_latency,
                                 unrelated_per_access=args.unrelated, inputs=inputs,
                                 waves=args.waves, config=config,
                                 gpu_interval=args.gpu_interval)
        outputs = run.outputs
        measured = run.measurements
        report.update(complete=run.complete, error=run.error, cycles=run.cycles,
                      config=args.config, gpu_interval_cycles=args.gpu_interval,
                      pressure=args.pressure, reorder=args.reorder,
                      memory_latency_cycles=args.memory_latency,
                      instructions=measured["instructions"],
                      gpu_requests=measured["gpu_requests"],
                      ndp_requests=measured["ndp_memory_requests"],
                      gpu_stall_cycles=measured["stall_cycles"],
                      first_write_stall_cycles=measured["first_write_stall_cycles"],
                      tail_cycles=measured["tail_cycles"],
                      completed=measured["completed"], drained=measured["drained"],
                      mismatches_against_iss=differing_elements(outputs, iss_outputs))
        if dump is not None and args.waves:
            shutil.copy2(run.directory / "waves.fst", dump / "waves.fst")
    report["mismatches"] = differing_elements(outputs, golden)
    report["passed"] = bool(report["complete"] and report["error"] is None
                            and not report["mismatches"]
                            and not report.get("mismatches_against_iss"))
    if dump is not None:
        _dump(dump, inputs, outputs, dict(launch.params), report)

    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(_summary(report, dump))
    return 0 if report["passed"] else 1


def _sizes(problem):
    return ", ".join(f"{dim} {value}" for dim, value in problem.items())


def _summary(report, dump):
    lines = [f"kernel run: {report['kernel']} ({_sizes(report['problem'])}) on "
             f"{report['simulator']}, seed {report['seed']}: {report['triggers']} triggers"]
    if report["simulator"] != "iss":
        state = ("complete" if report["complete"] else
                 f"stopped: entry {report['error'][0]}, pc {report['error'][1]}, "
                 f"{report['error'][2]}" if report["error"] else "not complete")
        lines.append(f"  {state} after {report['cycles']:,} cycles; {report['instructions']:,} "
                     f"instructions, {report['gpu_requests']:,} GPU and {report['ndp_requests']:,} "
                     f"NDP memory requests")
        lines.append(f"  GPU stall cycles: {report['gpu_stall_cycles']:,} of {report['cycles']:,}, "
                     f"the cycles the slice held the GPU's requests because the engine's event "
                     f"queue was full. A GPU's share of a memory channel is a sector every 4 "
                     f"cycles on an A100, 2 on an H100 (--gpu-interval); the kernel's pace at the "
                     f"GPUs' rates is `make bench`'s kernel_rtl and kernel_on_the_fly "
                     f"(docs/benchmarks.md)")
        lines.append(f"  configuration {report['config']}, one triggering access offered every "
                     f"{report['gpu_interval_cycles']} cycles from arming: "
                     f"{_cycles(report['first_write_stall_cycles'])} stall cycles before the "
                     f"first was taken, {_cycles(report['tail_cycles'])} cycles from the last "
                     f"to completion")
        lines.append("  outputs against the ISS: " + _verdict(report["mismatches_against_iss"]))
    else:
        lines.append(f"  {report['instructions']} instructions")
    lines.append("  outputs against the golden: " + _verdict(report["mismatches"]))
    if dump:
        lines.append(f"  wrote {dump}/: inputs/, outputs/, params.json, report.json"
                     + (", waves.fst" if (dump / "waves.fst").exists() else ""))
    lines.append("PASS" if report["passed"] else "FAIL")
    return "\n".join(lines)


def _cycles(value):
    """A cycle count of the report, or "-" where the run did not get that far."""
    return "-" if value is None else str(value)


def _verdict(mismatches):
    if not mismatches:
        return "bit-exact"
    return "differ: " + ", ".join(f"{name} in {count} elements" for name, count in mismatches.items())


def register(subparsers):
    from matndp.host.kernels.assembler import DEFAULT_INSTRUCTION_WORDS
    from matndp.hw.config import NAMED_CONFIGS
    parser = subparsers.add_parser("kernel", help="NDP kernels: assemble, disassemble, list the library",
                                   description=__doc__)
    commands = parser.add_subparsers(dest="kernel_command", metavar="COMMAND", required=True)
    asm = commands.add_parser("asm", help="assemble kernel source into an .ndpk file")
    asm.add_argument("file", help="kernel source (docs/isa.md, 'Assembly language')")
    asm.add_argument("--output", type=output_file, metavar="FILE",
                     help="the .ndpk file to write (default: FILE with .ndpk)")
    asm.add_argument("--instruction-words", type=integer(1), default=DEFAULT_INSTRUCTION_WORDS,
                     help="instruction memory depth the kernel must fit (default %(default)s)")
    asm.add_argument("-I", "--include", action="append", default=[], metavar="FOLDER",
                     help="a folder where .include looks after the source's own (repeatable)")
    asm.set_defaults(func=run_asm)
    disasm = commands.add_parser("disasm", help="print the source of an .ndpk file")
    disasm.add_argument("file", help="an .ndpk file")
    disasm.set_defaults(func=run_disasm)
    doc = commands.add_parser("doc", help="render docs/isa.md from hw/engine/isa.py")
    doc.add_argument("--output", type=output_file, metavar="FILE",
                     help="write to this file instead of standard output")
    doc.set_defaults(func=run_doc)
    listing = commands.add_parser("list", help="the kernel library: one kernel a line with its "
                                  "triggering access and instructions per sector")
    listing.add_argument("--ops", action="store_true", help="list the multi-phase ops instead")
    listing.add_argument("--markdown", action="store_true",
                         help="print the generated part of docs/kernels.md (make docs writes it)")
    listing.set_defaults(func=run_list)
    run = commands.add_parser(
        "run", help="run a library kernel through the RTL (or the ISS) on random inputs and "
                    "check its outputs bit for bit against the ISS and the golden model",
        description="Run library kernel NAME on seeded random inputs: under a simulator the "
                    "slice with its engine, driven by the host runtime, with back-pressure "
                    "and unrelated GPU traffic if asked. Exit code 0 when the outputs are "
                    "bit-exact, 1 when not.")
    run.add_argument("name", help="a library kernel (`matndp kernel list`)")
    for dim, default in DEFAULT_SIZES.items():
        run.add_argument(f"--{dim}", type=integer(1, 1 << 24), metavar="N",
                         help=f"problem size, where the kernel has it (default {default}); "
                              f"a two-dimensional kernel given only --elements gets rows of "
                              f"the default width" if dim == "elements" else
                              f"problem size, where the kernel has it (default {default})")
    run.add_argument("--sim", choices=SIMULATORS, default="verilator",
                     help="where to run it (default %(default)s)")
    run.add_argument("--config", choices=list(NAMED_CONFIGS), default=None,
                     help="the slice's named configuration (docs/engine.md, \"Named "
                          "configurations\"; default: the one $MATNDP_SLICE names, "
                          "default unless it names another)")
    run.add_argument("--gpu-interval", type=integer(1, 1 << 16), default=1, metavar="K",
                     help="the GPU offers one triggering access every K cycles from the "
                          "entry's arming, its initializer included (default %(default)s; "
                          "not with --pressure)")
    run.add_argument("--seed", type=integer(0), default=1,
                     help="seed of the inputs and of the timing (default %(default)s)")
    run.add_argument("--pressure", type=fraction(below=1.0), default=0.0,
                     help="probability of a pause on every stream each cycle (default %(default)s)")
    run.add_argument("--memory-latency", type=integer(1, 10_000), default=20, metavar="CYCLES",
                     help="memory read latency (default %(default)s cycles)")
    run.add_argument("--reorder", action="store_true",
                     help="let memory answer reads out of order")
    run.add_argument("--unrelated", type=integer(0, 64), default=0, metavar="N",
                     help="unrelated GPU accesses mixed in per triggering one (default %(default)s)")
    run.add_argument("--dump", metavar="DIR",
                     help="write DIR/inputs/NAME.npy, DIR/outputs/NAME.npy, DIR/params.json "
                          "and DIR/report.json (tensor and scalar names as in docs/kernels.md)")
    run.add_argument("--waves", action="store_true", help="with --dump: record DIR/waves.fst")
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.set_defaults(func=run_run)
