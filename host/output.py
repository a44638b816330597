"""Writing the files that commands and reports produce.

Every file is written under a temporary name beside its destination and renamed into place
once complete, so that an interrupted or failed run leaves either the previous file or
none, never a truncated one; a folder created for it is removed again when the write fails.
"""

import contextlib
import os
import pathlib
import shutil


__all__ = ["write_text", "atomic_path", "whole_folder", "figure_path", "FIGURE_FORMATS", "pyplot", "save_figure"]


# The image formats the file-only backend writes, by file suffix.
FIGURE_FORMATS = (".png", ".pdf", ".svg")


def _missing_parents(path):
    """The folders above ``path`` that do not exist yet, outermost first."""
    missing = []
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    return missing[::-1]


@contextlib.contextmanager
def atomic_path(path):
    """A temporary path to write ``path``'s content to; renamed to ``path`` when the block
    ends without an exception, removed (with any folder made for it) when it raises."""
    path = pathlib.Path(path)
    created = _missing_parents(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # The suffix stays last, so that writers that pick a format by suffix keep picking it.
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.partial{path.suffix}")
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def write_text(path, text):
    """Write ``text`` to ``path`` (atomically, creating its folder); returns the path."""
    path = pathlib.Path(path)
    with atomic_path(path) as temporary:
        temporary.write_text(text)
    return path


def figure_path(path, default_suffix=".png"):
    """The path a figure named ``path`` is written to: ``path`` itself when it ends in an
    image suffix, ``path`` + ``default_suffix`` when it has no suffix. Any other suffix is
    refused (a ValueError naming the formats), rather than replaced."""
    path = pathlib.Path(path)
    if not path.suffix:
        return path.with_name(path.name + default_suffix)
    if path.suffix.lower() not in FIGURE_FORMATS:
        raise ValueError(f"{path}: a figure is written as {', '.join(FIGURE_FORMATS)}; "
                         f"not {path.suffix}")
    return path


def pyplot():
    """matplotlib's pyplot on the file-only backend (no display is assumed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_figure(figure, path, dpi=120):
    """Save ``figure`` to :func:`figure_path` of ``path`` and close it; returns the path
    actually written."""
    path = figure_path(path)
    try:
        figure.tight_layout()
        with atomic_path(path) as temporary:
            figure.savefig(temporary, dpi=dpi, format=path.suffix[1:].lower())
    finally:
        pyplot().close(figure)
    return path


@contextlib.contextmanager
def whole_folder(output):
    """A folder beside ``output`` (a :class:`pathlib.Path`) to write into, which replaces
    ``output`` when the block ends without an exception and is removed when it raises
    (Ctrl-C included): a folder of outputs is written whole or not at all."""
    work = output.with_name(output.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        yield work
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    shutil.rmtree(output, ignore_errors=True)
    work.replace(output)
