"""``matndp sweep``: exit codes, messages, the summary line, the listing of point functions."""

import json

import pytest

from matndp.sim.sweep.registry import POINT_FUNCTIONS
from tests.paths import DOCS
from tests.sim.cli.commands import exit_code


GOOD = """point = "gpu"
[fixed]
gpu = "a100"
batch = 2
[axes]
model = ["resnet50", "bert-base"]
"""


def _spec(tmp_path, text):
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text, message", [
    (GOOD.replace('model = ["resnet50", "bert-base"]', 'modl = ["resnet50"]'),
     "axes.modl: gpu has no parameter 'modl'"),
    (GOOD.replace("batch = 2", "batch = 0"), "fixed.batch: must be an integer >= 1, not 0"),
    (GOOD.replace('point = "gpu"', 'point = "cpu"'), "point: unknown point function 'cpu'"),
    (GOOD + "[seeds]\n", "seeds: a range needs 'from'"),
    ("point = ", "not TOML"),
])
def test_a_bad_specification_exits_2_naming_the_key(tmp_path, capsys, text, message):
    path = _spec(tmp_path, text)
    assert exit_code(["sweep", path, "--output", str(tmp_path / "out.jsonl")]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"matndp sweep: error: {path}: ")
    assert message in captured.err and "Traceback" not in captured.err
    assert not (tmp_path / "out.jsonl").exists()


def test_missing_specification_and_bad_jobs_exit_2(tmp_path, capsys):
    assert exit_code(["sweep", str(tmp_path / "none.toml")]) == 2
    assert "no such sweep specification" in capsys.readouterr().err
    assert exit_code(["sweep"]) == 2
    assert "give a sweep specification" in capsys.readouterr().err
    assert exit_code(["sweep", _spec(tmp_path, GOOD), "--jobs", "0"]) == 2
    assert "argument --jobs: must be an integer >= 1, got '0'" in capsys.readouterr().err


def test_a_run_prints_only_its_summary_and_resumes(tmp_path, capsys):
    output = tmp_path / "out.jsonl"
    argv = ["sweep", _spec(tmp_path, GOOD), "--output", str(output), "--jobs", "1"]
    assert exit_code(argv + ["--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("sweep: 2 points: 2 run, 0 skipped, 0 failed in ")
    assert f"wrote {output} and {tmp_path / 'out.png'}" in captured.err
    assert len(output.read_text().splitlines()) == 2
    assert exit_code(argv + ["--no-plot"]) == 0
    # progress (tqdm) goes to standard error as well; nothing was left to run
    assert "sweep: 2 points: 0 run, 2 skipped, 0 failed" in capsys.readouterr().err


def test_failed_points_make_exit_status_1(tmp_path, capsys):
    text = GOOD.replace("batch = 2", "batch = 4096")
    output = tmp_path / "out.jsonl"
    assert exit_code(["sweep", _spec(tmp_path, text), "--output", str(output),
                      "--no-progress", "--no-plot"]) == 1
    assert "2 failed" in capsys.readouterr().err
    lines = [json.loads(text) for text in output.read_text().splitlines()]
    assert all(line["status"] == "failed" and "needs at least" in line["error"] for line in lines)


def test_a_corrupt_output_file_exits_2_naming_the_line(tmp_path, capsys):
    output = tmp_path / "out.jsonl"
    output.write_text("garbage\n")
    assert exit_code(["sweep", _spec(tmp_path, GOOD), "--output", str(output)]) == 2
    assert f"{output}:1: not a sweep result line" in capsys.readouterr().err


def test_list_points_names_every_function_and_parameter(capsys):
    assert exit_code(["sweep", "--list-points"]) == 0
    out = capsys.readouterr().out
    for function in POINT_FUNCTIONS.values():
        assert f"{function.name}: {function.help}" in out
        for parameter in function.parameters:
            assert f"  {parameter.name} " in out


def test_the_documentation_describes_every_point_function_and_parameter():
    text = (DOCS / "sweep.md").read_text()
    for function in POINT_FUNCTIONS.values():
        assert f"`{function.name}`" in text
        for parameter in function.parameters:
            assert f"`{parameter.name}`" in text, (function.name, parameter.name)


def test_an_unreachable_ray_head_exits_2_at_once(tmp_path, capsys):
    pytest.importorskip("ray", reason="ray is not importable; `make setup` installs it")
    import socket
    with socket.socket() as probe:      # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = ["sweep", _spec(tmp_path, GOOD), "--output", str(tmp_path / "out.jsonl")]
    assert exit_code(argv + ["--ray", f"127.0.0.1:{port}"]) == 2
    assert f"error: no Ray cluster at 127.0.0.1:{port}: " in capsys.readouterr().err
    assert exit_code(argv + ["--ray", "head:port"]) == 2
    assert "Ray address 'head:port' is not HOST:PORT, auto or local" in capsys.readouterr().err
