"""The output conventions of sim/cli/output.py beyond those every command's table checks:
a log of its own for every run of a command, headed by the command line and the tools'
versions as `matndp doctor` names them, with the builds' and runs' own logs in it; and
"wrote" lines on standard error for every command that writes a file."""

import pathlib
import re
import subprocess

import pytest

from matndp.sim.cli import main
from matndp.sim.cli.doctor import versions
from matndp.sim.cli.output import tool_output


def test_every_run_of_a_command_keeps_its_own_readable_log(capfd, tmp_path, monkeypatch):
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path))
    # The log is headed by the command line: the test runner's own may be of any length.
    monkeypatch.setattr("sys.argv", ["matndp", "probe"])
    for word in ("first", "second"):
        with tool_output("probe") as tools:
            subprocess.run(["echo", f"{word} run's compiler output"], check=True)
            tools.step(f"probe: the {word} step")
    logs = list((tmp_path / "logs").glob("probe-*.log"))
    assert len(logs) == 2 and all(re.fullmatch(r"probe-\d{8}-\d{6}(-\d+)?\.log", log.name) for log in logs)
    texts = [log.read_text() for log in logs]
    [first] = [text for text in texts if "first run's compiler output" in text]
    [second] = [text for text in texts if "second run's compiler output" in text]
    assert first != second
    # The steps, stamped, and how it ended are in the log beside the tools' output.
    assert re.search(r"^\[\d\d:\d\d:\d\d\] probe: the first step$", first, re.M)
    assert re.search(r"^\[\d\d:\d\d:\d\d\] finished after \d+ s$", first, re.M)
    assert max(len(line) for line in first.splitlines()) < 1000
    err = capfd.readouterr().err
    assert f"log: {logs[0]}" in err and f"log: {logs[1]}" in err


def test_a_log_is_headed_by_the_command_and_the_versions_doctor_reports(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path))
    monkeypatch.setattr("sys.argv", ["matndp", "sim", "--tiles", "1"])
    with tool_output("sim"):
        pass
    [log] = (tmp_path / "logs").glob("sim-*.log")
    header = log.read_text().splitlines()
    assert header[0] == "matndp sim: matndp sim --tiles 1"
    tools = dict(item.split(" ", 1) if not item.startswith("icarus") else ("icarus verilog", item[15:])
                 for item in header[2].removeprefix("tools: ").split(", "))
    assert tools["verilator"] == versions(["verilator"])["verilator"]
    assert main(["doctor"]) == 0
    doctor = capsys.readouterr().out
    assert f"  {'verilator':26s} {tools['verilator']}\n" in doctor


def test_doctor_reports_the_verilator_its_models_report():
    """A Verilator model prints ``Running on Verilator version X`` from its headers'
    VERILATOR_VERSION: doctor reports that version, the wheel's own number beside it."""
    root = subprocess.run(["verilator", "--getenv", "VERILATOR_ROOT"], capture_output=True,
                          text=True, check=True, env=_tool_path()).stdout.strip()
    header = (pathlib.Path(root) / "include" / "verilated_config.h").read_text()
    model_version = re.search(r'#define VERILATOR_VERSION "([^"]+)"', header).group(1)
    assert versions(["verilator"])["verilator"].split()[0] == model_version


def _tool_path():
    import os
    import sys
    return {**os.environ, "PATH": f"{pathlib.Path(sys.executable).parent}:{os.environ['PATH']}"}


def test_doctor_reports_gtkwave_as_optional(capsys, monkeypatch):
    import shutil
    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs:
                        None if name == "gtkwave" else which(name, *args, **kwargs))
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "gtkwave (waveform viewer)  not installed; optional: apt-get install gtkwave" in out


def test_builds_report_through_the_command_while_it_runs(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path))
    with tool_output("probe") as tools:
        from matndp.sim import runner
        runner._report("  a build: the first of this design")
    assert "a build: the first of this design" in capfd.readouterr().err
    assert runner._reporting == {"step": None, "log": None}


@pytest.mark.parametrize("argv, written", [
    (["gpu", "run", "--model", "resnet50", "--gpu", "a100", "--batch", "2", "--plot", "{}/run.png"], "run.png"),
    (["tier", "run", "--model", "resnet50", "--batch", "2", "--hbm-fraction", "0.25", "--plot", "{}/t.png"], "t.png"),
    (["tier", "export", "--model", "resnet50", "--batch", "2", "--output", "{}/w.json"], "w.json"),
    (["model", "summary", "resnet50", "--output", "{}/s.json"], "s.json"),
    (["csr", "doc", "--output", "{}/csr.md"], "csr.md"),
])
def test_every_wrote_line_goes_to_standard_error(capsys, tmp_path, argv, written):
    assert main([word.format(tmp_path) for word in argv]) == 0
    captured = capsys.readouterr()
    assert f"wrote {tmp_path / written}" in captured.err
    assert "wrote" not in captured.out


def test_an_export_says_what_it_elaborates_before_it_does(capsys, tmp_path):
    assert main(["export", "--design", "axi", "--output", str(tmp_path / "axi.v")]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == ["export: elaborating the axi design and writing its Verilog",
                                         f"wrote {tmp_path / 'axi.v'} (module ndp_slice_axi)"]
    assert captured.out == ""
