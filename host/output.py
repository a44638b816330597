"""Writing the files that commands and reports produce."""

import pathlib


__all__ = ["write_text", "pyplot", "save_figure"]


def write_text(path, text):
    """Write ``text`` to ``path``, creating its folder; returns the path."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def pyplot():
    """matplotlib's pyplot on the file-only backend (no display is assumed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_figure(figure, path, dpi=120):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=dpi)
    pyplot().close(figure)
    return path
