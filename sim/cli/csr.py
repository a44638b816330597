"""``matndp csr doc``: render the CSR map from its one description."""

from matndp.hw.config import NDPConfig
from matndp.sim.cli import emit_text
from matndp.sim.cli.output import output_file


def run_doc(args):
    from matndp.sim.docgen.csr import render_csr_markdown
    emit_text(render_csr_markdown(NDPConfig()), args.output)
    return 0


def register(subparsers):
    parser = subparsers.add_parser("csr", help="the CSR map", description=__doc__)
    commands = parser.add_subparsers(dest="csr_command", metavar="COMMAND", required=True)
    doc = commands.add_parser("doc", help="render docs/csr.md from hw/csr_map.py")
    doc.add_argument("--output", type=output_file, metavar="FILE",
                     help="write to this file instead of standard output")
    doc.set_defaults(func=run_doc)
