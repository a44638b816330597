"""Files are written whole or not at all, and figures to the name given."""

import pytest

from matndp.host.output import atomic_path, figure_path, pyplot, save_figure, write_text


def test_a_write_that_fails_leaves_nothing_behind(tmp_path):
    target = tmp_path / "new" / "deeper" / "report.md"
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as temporary:
            temporary.write_text("half")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_a_write_that_fails_keeps_the_previous_file(tmp_path):
    target = write_text(tmp_path / "report.md", "old\n")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as temporary:
            temporary.write_text("new, half")
            raise RuntimeError("disk full")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_a_complete_write_replaces_the_file(tmp_path):
    target = write_text(tmp_path / "a" / "report.md", "old\n")
    assert write_text(target, "new\n") == target
    assert target.read_text() == "new\n" and [p.name for p in target.parent.iterdir()] == ["report.md"]


@pytest.mark.parametrize("given, path", [("out/noext", "out/noext.png"), ("x.svg", "x.svg"),
                                         ("x.PDF", "x.PDF"), ("v1.2/plot", "v1.2/plot.png")])
def test_figure_paths(given, path):
    assert str(figure_path(given)) == path


def test_a_figure_suffix_that_is_no_image_format_is_refused():
    with pytest.raises(ValueError, match=r"plot.txt: a figure is written as .png, .pdf, .svg; not .txt"):
        figure_path("plot.txt")


def test_a_figure_is_saved_in_the_format_its_suffix_names(tmp_path):
    figure, axis = pyplot().subplots()
    axis.plot([0, 1], [1, 0])
    path = save_figure(figure, tmp_path / "plot.svg")
    assert path == tmp_path / "plot.svg" and path.read_text().lstrip().startswith("<?xml")
    assert [p.name for p in tmp_path.iterdir()] == ["plot.svg"]
