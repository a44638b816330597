"""Where the tests find the repository's own files."""

import pathlib


REPOSITORY = pathlib.Path(__file__).resolve().parent.parent
DOCS = REPOSITORY / "docs"
