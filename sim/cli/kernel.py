"""``matndp kernel``: assemble and disassemble NDP kernels; render docs/isa.md."""

import pathlib
import sys

from matndp.sim.cli import UsageError, emit_text


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


def register(subparsers):
    from matndp.host.kernels.assembler import DEFAULT_INSTRUCTION_WORDS
    parser = subparsers.add_parser("kernel", help="NDP kernels: assemble, disassemble",
                                   description=__doc__)
    commands = parser.add_subparsers(dest="kernel_command", metavar="COMMAND", required=True)
    asm = commands.add_parser("asm", help="assemble kernel source into an .ndpk file")
    asm.add_argument("file", help="kernel source (docs/isa.md, 'Assembly language')")
    asm.add_argument("--output", help="the .ndpk file to write (default: FILE with .ndpk)")
    asm.add_argument("--instruction-words", type=int, default=DEFAULT_INSTRUCTION_WORDS,
                     help="instruction memory depth the kernel must fit (default %(default)s)")
    asm.set_defaults(func=run_asm)
    disasm = commands.add_parser("disasm", help="print the source of an .ndpk file")
    disasm.add_argument("file", help="an .ndpk file")
    disasm.set_defaults(func=run_disasm)
    doc = commands.add_parser("doc", help="render docs/isa.md from hw/engine/isa.py")
    doc.add_argument("--output", help="write to this file instead of standard output")
    doc.set_defaults(func=run_doc)
