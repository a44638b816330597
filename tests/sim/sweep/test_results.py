"""The result file: resumption drops a half-written last line and refuses any other junk."""

import json

import pytest

from matndp.sim.sweep import ResultFile


def _line(key, status="ok"):
    return {"key": key, "point": "gpu", "config": {"model": "gpt2"}, "seed": None,
            "status": status, "results": {"x": 1}, "wall_s": 0.1, "worker": "h:1"}


def _write(path, lines, tail=""):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + tail)


def test_a_missing_file_holds_nothing(tmp_path):
    assert ResultFile(tmp_path / "none.jsonl").load() == []


def test_complete_lines_are_read_back(tmp_path):
    path = tmp_path / "out.jsonl"
    _write(path, [_line("a"), _line("b", "failed")])
    assert [line["key"] for line in ResultFile(path).load()] == ["a", "b"]


@pytest.mark.parametrize("tail", ['{"key": "c", "point": "gp', '{"key": "c"}', "  ",
                                  json.dumps(_line("c"))])
def test_a_half_written_last_line_is_dropped_from_the_file(tmp_path, tail):
    # Even a last line that parses is not trusted without its newline: the writer may
    # have been stopped inside a longer one.
    path = tmp_path / "out.jsonl"
    _write(path, [_line("a"), _line("b")], tail=tail)
    complete = path.read_bytes()[:-len(tail.encode())]
    assert [line["key"] for line in ResultFile(path).load()] == ["a", "b"]
    assert path.read_bytes() == complete


def test_a_bad_line_before_the_last_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(_line("a")) + "\nnot json\n" + json.dumps(_line("b")) + "\n")
    with pytest.raises(ValueError, match=r"out.jsonl:2: not a sweep result line \('not json'\)"):
        ResultFile(path).load()
    path.write_text(json.dumps(_line("a")) + "\n" + json.dumps({"key": "b"}) + "\n")
    with pytest.raises(ValueError, match=r"out.jsonl:2: not a sweep result line"):
        ResultFile(path).load()


def test_append_and_rewrite(tmp_path):
    path = tmp_path / "deep" / "out.jsonl"
    with ResultFile(path) as store:
        store.append(_line("a"))
        store.append(_line("b"))
    assert [json.loads(text)["key"] for text in path.read_text().splitlines()] == ["a", "b"]
    ResultFile(path).rewrite([_line("b")])
    assert [line["key"] for line in ResultFile(path).load()] == ["b"]
