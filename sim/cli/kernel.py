"""``matndp kernel``: assemble and disassemble NDP kernels; render docs/isa.md; list the
kernel library (and render the generated part of docs/kernels.md)."""

import pathlib
import sys

from matndp.sim.cli import UsageError, emit_text
from matndp.sim.cli.arguments import integer
from matndp.sim.cli.output import output_file


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
    image = assemble_file(source, instruction_words=args.instruction_words)
    try:
        save_image(image, output)
    except OSError as error:
        raise UsageError(f"{output}: cannot write ({error.strerror})") from None
    sections = ", ".join(f".{section.value} at {start}" for section, start in
                         sorted(image.sections.items(), key=lambda item: item[1]))
    print(f"wrote {output}: kernel {image.name}, {len(image.words)} instructions ({sections})")
    return 0


def run_disasm(args):
    from matndp.host.kernels.disassembler import disassemble
    from matndp.host.kernels.image import load_image
    sys.stdout.write(disassemble(load_image(_readable(args.file))))
    return 0


def run_doc(args):
    from matndp.host.kernels.isa_doc import render_isa_markdown
    emit_text(render_isa_markdown(), args.output)
    return 0


# M2NDP's published kernel bodies, instructions per 32-byte packet (Kim et al., "M2NDP",
# MICRO 2024; PSAL-POSTECH/M2NDP-public): the library's counts are shown beside them.
M2NDP_BODIES = (
    ("ReLU", "10", ("relu_fwd",)),
    ("GELU", "26", ("gelu_fwd",)),
    ("softmax: max", "7", ("softmax_max",)),
    ("softmax: exp-sum", "18", ("softmax_expsum",)),
    ("softmax: scale", "9", ("softmax_scale",)),
    ("layer-norm: statistics", "13–15", ("layernorm_stats",)),
    ("layer-norm: apply", "8–14", ("layernorm_apply",)),
)

GENERATED_BEGIN = ("<!-- Generated from host/kernels/catalog.py by `matndp kernel list --markdown "
                   "--update docs/kernels.md`; do not edit by hand. -->")
GENERATED_END = "<!-- End of the generated part. -->"


def _trigger(row):
    return f"{row['access']} {row['trigger']}"


def render_list(kernels):
    rows = [spec.describe() for spec in kernels.values()]
    width = max(len(row["name"]) for row in rows)
    trigger = max(len(_trigger(row)) for row in rows)
    lines = [f"{row['name']:<{width}}  {_trigger(row):<{trigger}}  "
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


def _cell(value):
    return str(value).replace("|", "\\|")


def render_markdown(kernels, ops):
    """The generated part of docs/kernels.md: tables and a reference entry per kernel."""
    out = [GENERATED_BEGIN, "", "### Kernels", "",
           "| kernel | trigger | elements/sector | instructions/sector | extra memory accesses/sector "
           "| scratchpad accesses/sector | ordered | sections |",
           "|---|---|---|---|---|---|---|---|"]
    for spec in kernels.values():
        row = spec.describe()
        out.append(f"| `{row['name']}` | {_trigger(row)} | {row['elements_per_sector']} "
                   f"{row['trigger_dtype']} | {row['instructions_per_sector']} | "
                   f"{row['memory_accesses_per_sector']} | {row['scratchpad_accesses_per_sector']} | "
                   f"{'yes' if row['ordered'] else 'no'} | {', '.join(row['sections'])} |")
    out += ["", "### Multi-phase ops", "", "| op | phases | instructions/sector per phase |",
            "|---|---|---|"]
    for name, spec in ops.items():
        if len(spec.phases) > 1:
            out.append(f"| `{name}` | {' → '.join(f'`{p}`' for p in spec.phases)} | "
                       f"{' + '.join(map(str, spec.instructions_per_sector))} |")
    out += ["", "### Beside M2NDP", "",
            "| kernel body | M2NDP, instructions/packet | library kernel | instructions/sector |",
            "|---|---|---|---|"]
    for what, theirs, names in M2NDP_BODIES:
        for name in names:
            out.append(f"| {what} | {theirs} | `{name}` | {kernels[name].instructions_per_sector} |")
    out += ["", "### Reference", ""]
    for spec in kernels.values():
        row = spec.describe()
        out += [f"#### `{row['name']}`", "",
                f"{row['summary'][0].upper()}{row['summary'][1:]}. Source `library/{row['source']}`; "
                f"sized by {', '.join(row['dims'])}; triggered by {row['access']}s of "
                f"`{row['trigger']}` ({row['elements_per_sector']} {row['trigger_dtype']} elements "
                f"a sector{', the last may be partial' if row['ragged'] else ''}); "
                f"{row['instructions_per_sector']} instructions, {row['memory_accesses_per_sector']} "
                f"memory and {row['scratchpad_accesses_per_sector']} scratchpad accesses per sector"
                f"{'; ordered' if row['ordered'] else ''}"
                f"{'; the same bits in any trigger order' if row['order_independent'] else ''}.", "",
                "| tensor | role | dtype | layout |", "|---|---|---|---|"]
        for tensor in row["tensors"]:
            internal = " (between phases)" if tensor["internal"] else ""
            out.append(f"| `{tensor['name']}` | {tensor['role']}{internal} | {tensor['dtype']} | "
                       f"{_cell(tensor['layout'])} |")
        if row["params"]:
            out += ["", "| parameter | default | meaning |", "|---|---|---|"]
            out += [f"| `{param['name']}` | {param['default']!r} | {_cell(param['doc'])} |"
                    for param in row["params"]]
        out += ["", f"Order: {row['order']}.", ""]
    out.append(GENERATED_END)
    return "\n".join(out) + "\n"


def update_generated(text, generated):
    """``text`` with its generated part (between the markers) replaced by ``generated``."""
    start, end = text.find(GENERATED_BEGIN), text.find(GENERATED_END)
    if start < 0 or end < start:
        raise UsageError("the file has no generated part (its begin and end markers)")
    return text[:start] + generated + text[end + len(GENERATED_END) + 1:]


def run_list(args):
    from matndp.host.kernels.catalog import KERNELS, OPS
    if args.update and not args.markdown:
        raise UsageError("--update goes with --markdown")
    if args.markdown:
        generated = render_markdown(KERNELS, OPS)
        if args.update:
            path = pathlib.Path(args.update)
            if not path.is_file():
                raise UsageError(f"{path}: no such file")
            from matndp.host.output import write_text
            write_text(path, update_generated(path.read_text(), generated))
            print(f"updated {path}")
        else:
            sys.stdout.write(generated)
    elif args.ops:
        sys.stdout.write(render_ops(OPS))
    else:
        sys.stdout.write(render_list(KERNELS))
    return 0


def register(subparsers):
    from matndp.host.kernels.assembler import DEFAULT_INSTRUCTION_WORDS
    parser = subparsers.add_parser("kernel", help="NDP kernels: assemble, disassemble, list the library",
                                   description=__doc__)
    commands = parser.add_subparsers(dest="kernel_command", metavar="COMMAND", required=True)
    asm = commands.add_parser("asm", help="assemble kernel source into an .ndpk file")
    asm.add_argument("file", help="kernel source (docs/isa.md, 'Assembly language')")
    asm.add_argument("--output", type=output_file, metavar="FILE",
                     help="the .ndpk file to write (default: FILE with .ndpk)")
    asm.add_argument("--instruction-words", type=integer(1), default=DEFAULT_INSTRUCTION_WORDS,
                     help="instruction memory depth the kernel must fit (default %(default)s)")
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
                         help="print the generated part of docs/kernels.md")
    listing.add_argument("--update", metavar="FILE",
                         help="with --markdown: replace the generated part of FILE")
    listing.set_defaults(func=run_list)
