"""``matndp fp doc``: the op table of docs/fp.md from the FP units' op table."""

import pathlib


def run_doc(args):
    from matndp.sim.fp_doc import FP_DOC_COMMAND, update_fp_doc
    path = pathlib.Path(args.file)
    text = path.read_text()
    updated = update_fp_doc(text)
    if args.check:
        if updated != text:
            print(f"{path} is out of date; run `{FP_DOC_COMMAND}`")
            return 1
        print(f"{path} is up to date")
        return 0
    if updated != text:
        from matndp.host.output import write_text
        write_text(path, updated)
        print(f"updated {path}")
    else:
        print(f"{path} is up to date")
    return 0


def register(subparsers):
    parser = subparsers.add_parser("fp", help="the FP32 units", description=__doc__)
    commands = parser.add_subparsers(dest="fp_command", metavar="COMMAND", required=True)
    doc = commands.add_parser(
        "doc", help="regenerate the op table in docs/fp.md from hw/fp/units.py",
        description="Replace the generated part of the FP document (between its marker "
                    "lines) with the op table of hw/fp/units.py.")
    doc.add_argument("--file", default="docs/fp.md", help="the document (default docs/fp.md)")
    doc.add_argument("--check", action="store_true",
                     help="only report whether the document is up to date (exit 1 if not)")
    doc.set_defaults(func=run_doc)
