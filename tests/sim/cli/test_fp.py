"""``matndp fp doc``: rewrites the generated part of the FP document, reports with
``--check`` whether it is current, and refuses a document without markers (exit 2)."""

from matndp.sim.cli import main
from matndp.sim.fp_doc import BEGIN, END, render_op_table


def test_doc_updates_then_checks(tmp_path, capsys):
    path = tmp_path / "fp.md"
    path.write_text(f"intro\n{BEGIN}\nstale\n{END}\n")
    assert main(["fp", "doc", "--file", str(path), "--check"]) == 1
    assert "out of date" in capsys.readouterr().out
    assert "stale" in path.read_text()
    assert main(["fp", "doc", "--file", str(path)]) == 0
    assert path.read_text() == f"intro\n{BEGIN}\n{render_op_table()}{END}\n"
    assert main(["fp", "doc", "--file", str(path), "--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_document_without_markers_is_refused(tmp_path, capsys):
    path = tmp_path / "fp.md"
    path.write_text("no markers\n")
    assert main(["fp", "doc", "--file", str(path)]) == 2
    assert "needs exactly one line" in capsys.readouterr().err
    assert path.read_text() == "no markers\n"


def test_missing_document_is_refused(tmp_path, capsys):
    assert main(["fp", "doc", "--file", str(tmp_path / "absent.md")]) == 2
    assert "absent.md" in capsys.readouterr().err
