"""``matndp docs``: regenerate every generated document under ``docs/`` (``make docs``)."""

import pathlib


def run_docs(args):
    from matndp.sim.docgen.documents import DOCUMENTS, stale_documents, update_documents
    root = pathlib.Path(args.root)
    if not (root / "docs").is_dir():
        raise ValueError(f"{root}: no docs/ folder (run from the repository or give --root)")
    if args.check:
        stale = stale_documents(root)
        for path in stale:
            print(f"{path} is out of date; run `make docs`")
        print(f"docs: {len(DOCUMENTS) - len(stale)} of {len(DOCUMENTS)} generated documents current")
        return 1 if stale else 0
    written = update_documents(root)
    for path in written:
        print(f"updated {path}")
    print(f"docs: {len(written)} of {len(DOCUMENTS)} generated documents rewritten, "
          f"{len(DOCUMENTS) - len(written)} already current")
    return 0


def register(subparsers):
    parser = subparsers.add_parser(
        "docs", help="regenerate the generated documents under docs/",
        description="Render every generated document (the register map, the instruction set, "
                    "the FP units' op table, the kernel library's reference) from its source "
                    "and write those that changed.")
    parser.add_argument("--check", action="store_true",
                        help="only report which documents are out of date (exit 1 if any)")
    parser.add_argument("--root", default=".", metavar="FOLDER",
                        help="the repository whose docs/ to write (default the current folder)")
    parser.set_defaults(func=run_docs)
