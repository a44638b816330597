"""The files a guide under docs/ says a run writes: the first column of the files table
that follows a heading (``report.md``, ``run/``, one or more names a row)."""

import re

from tests.paths import DOCS


def documented_files(guide, heading):
    """The names in the first column of the first table after the heading that starts with
    ``heading`` in docs/``guide``; a folder keeps its trailing ``/``."""
    text = (DOCS / guide).read_text()
    start = re.search(rf"^#+ {re.escape(heading)}", text, re.M)
    assert start, f"docs/{guide} has no heading {heading!r}"
    names = set()
    in_table = False
    for line in text[start.end():].splitlines():
        if line.startswith("|"):
            in_table = True
            first = line.split("|")[1]
            names.update(re.findall(r"`([^`]+)`", first))
        elif in_table:
            break
    assert names, f"no files table after {heading!r} in docs/{guide}"
    return names


def written(folder):
    """The names in ``folder``, folders with a trailing ``/``."""
    return {path.name + ("/" if path.is_dir() else "") for path in folder.iterdir()}
