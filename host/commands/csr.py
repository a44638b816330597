"""``matndp csr doc``: render the CSR map from its one description."""

import pathlib
import sys

from hw.config import NDPConfig


def run_doc(args):
    from ..csr_doc import render_csr_markdown
    text = render_csr_markdown(NDPConfig())
    if args.output:
        path = pathlib.Path(args.output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")
    else:
        sys.stdout.write(text)
    return 0


def register(subparsers):
    parser = subparsers.add_parser("csr", help="the CSR map", description=__doc__)
    commands = parser.add_subparsers(dest="csr_command", metavar="COMMAND", required=True)
    doc = commands.add_parser("doc", help="render docs/csr.md from hw/csr_map.py")
    doc.add_argument("--output", help="write to this file instead of standard output")
    doc.set_defaults(func=run_doc)
