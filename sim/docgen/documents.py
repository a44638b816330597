"""Every generated document under ``docs/``, by path: what renders it and whether it is the
whole file or a marked part of one. ``make docs`` (``matndp docs``) writes them; the tests
check that the files in the repository are current."""

from dataclasses import dataclass
import pathlib
import typing


__all__ = ["GeneratedDocument", "DOCUMENTS", "stale_documents", "update_documents"]


@dataclass(frozen=True)
class GeneratedDocument:
    """``path`` (relative to the repository) and ``updated(text)``: the document's text as
    it must be, given its text now (ignored when the whole file is generated)."""

    path: str
    updated: typing.Callable[[str], str]


def _csr(text):
    from matndp.hw.config import NDPConfig
    from matndp.sim.docgen.csr import render_csr_markdown
    return render_csr_markdown(NDPConfig())


def _isa(text):
    from matndp.sim.docgen.isa import render_isa_markdown
    return render_isa_markdown()


def _fp(text):
    from matndp.sim.docgen.fp import update_fp_doc
    return update_fp_doc(text)


def _kernels(text):
    from matndp.host.kernels.library import KERNELS, OPS
    from matndp.sim.docgen.kernels import update_kernels_doc
    return update_kernels_doc(text, KERNELS, OPS)


DOCUMENTS = (
    GeneratedDocument("docs/csr.md", _csr),
    GeneratedDocument("docs/isa.md", _isa),
    GeneratedDocument("docs/fp.md", _fp),
    GeneratedDocument("docs/kernels.md", _kernels),
)


def _current(root, document):
    path = pathlib.Path(root) / document.path
    text = path.read_text() if path.exists() else ""
    return path, text, document.updated(text)


def stale_documents(root):
    """The paths of the documents under ``root`` that differ from what renders them."""
    stale = []
    for document in DOCUMENTS:
        _, text, new = _current(root, document)
        if new != text:
            stale.append(document.path)
    return stale


def update_documents(root):
    """Write every stale document under ``root``; returns the paths written."""
    from matndp.host.output import write_text
    written = []
    for document in DOCUMENTS:
        path, text, new = _current(root, document)
        if new != text:
            write_text(path, new)
            written.append(document.path)
    return written
