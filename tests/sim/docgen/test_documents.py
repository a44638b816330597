"""Every generated document in the repository is what its source renders, ``make docs``
writes them all, and a stale or missing document is found and rewritten."""

import shutil

import pytest

from matndp.sim.cli import main
from matndp.sim.docgen.documents import DOCUMENTS, stale_documents, update_documents
from tests.paths import REPOSITORY


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda document: document.path)
def test_the_repositorys_document_is_current(document):
    text = (REPOSITORY / document.path).read_text()
    assert document.updated(text) == text, f"{document.path} is out of date: run `make docs`"


def test_make_docs_runs_the_docs_command():
    makefile = (REPOSITORY / "Makefile").read_text()
    recipe = makefile.split("\ndocs:", 1)[1].splitlines()[1]
    assert recipe.strip() == "$(MATNDP) docs"


@pytest.fixture
def copy(tmp_path):
    shutil.copytree(REPOSITORY / "docs", tmp_path / "docs")
    return tmp_path


def test_a_stale_part_is_found_and_rewritten_and_nothing_else(copy):
    kernels = copy / "docs" / "kernels.md"
    original = kernels.read_text()
    kernels.write_text(original.replace("| `relu_fwd` |", "| `relu_fwd (stale)` |", 1))
    csr = copy / "docs" / "csr.md"
    csr.unlink()
    assert stale_documents(copy) == ["docs/csr.md", "docs/kernels.md"]
    assert update_documents(copy) == ["docs/csr.md", "docs/kernels.md"]
    assert kernels.read_text() == original
    assert csr.read_text() == (REPOSITORY / "docs" / "csr.md").read_text()
    assert stale_documents(copy) == []


def test_the_command_checks_and_writes(copy, capsys):
    (copy / "docs" / "isa.md").write_text("stale\n")
    assert main(["docs", "--check", "--root", str(copy)]) == 1
    assert "docs/isa.md is out of date" in capsys.readouterr().out
    assert main(["docs", "--root", str(copy)]) == 0
    assert "updated docs/isa.md" in capsys.readouterr().out
    assert main(["docs", "--check", "--root", str(copy)]) == 0


def test_a_folder_without_docs_is_refused(tmp_path, capsys):
    assert main(["docs", "--root", str(tmp_path)]) == 2
    assert "no docs/ folder" in capsys.readouterr().err
