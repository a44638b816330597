"""The simulator runner's checks, its build-cache helper, its build profiles, and what a
build says while a command runs it."""

import os
import pathlib
import re
import sys

import pytest

from matndp.sim import runner
from matndp.sim.runner import (PROFILE_VARIABLE, SIMULATORS, build_profile, check_simulator,
                               last_build_seconds, prepare_build, reporting, run_cocotb,
                               write_if_changed)


def test_unknown_simulator_is_named():
    with pytest.raises(ValueError, match="unknown simulator 'modelsim'; choose one of verilator, icarus"):
        check_simulator("modelsim")


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_known_simulators_are_installed(simulator):
    check_simulator(simulator)


def test_write_if_changed_leaves_an_unchanged_file_alone(tmp_path):
    path = write_if_changed(tmp_path / "deep" / "design.v", "module a; endmodule\n")
    os.utime(path, (1_000_000, 1_000_000))
    assert write_if_changed(path, "module a; endmodule\n") == path
    assert path.stat().st_mtime == 1_000_000
    write_if_changed(path, "module b; endmodule\n")
    assert path.read_text() == "module b; endmodule\n" and path.stat().st_mtime != 1_000_000
    assert sorted(p.name for p in path.parent.iterdir()) == ["design.v"]


def test_an_unknown_build_profile_is_named(monkeypatch):
    monkeypatch.setenv(PROFILE_VARIABLE, "fastest")
    with pytest.raises(ValueError, match="MATNDP_SIM_PROFILE='fastest': choose one of full, test"):
        build_profile()
    monkeypatch.delenv(PROFILE_VARIABLE)
    assert build_profile() == "full"


def test_the_suite_builds_in_the_test_profile():
    assert os.environ[PROFILE_VARIABLE] == "test"


class _BuildPlanned(Exception):
    pass


def _planned_build(monkeypatch, tmp_path, profile, fast, extra=()):
    """What run_cocotb hands the simulator's runner to build, under ``profile``, for a
    Verilog top and ``extra`` sources; the build itself is not made."""
    seen = {}

    class Recorder:
        def build(self, **arguments):
            seen.update(arguments, runner=type(self).__name__, makeflags=os.environ["MAKEFLAGS"])
            raise _BuildPlanned

    monkeypatch.setattr(runner, "get_runner", lambda simulator: Recorder())
    monkeypatch.setattr(runner, "_LeanVerilator", type("TopOnly", (Recorder,), {}))
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path))
    monkeypatch.setenv(PROFILE_VARIABLE, profile)
    source = write_if_changed(tmp_path / "top.v", "module top(input a, output y); assign y = a; endmodule\n")
    with pytest.raises(_BuildPlanned):
        run_cocotb(sources=[source, *extra], toplevel="top", test_module="unused", fast=fast)
    assert "MAKEFLAGS" not in os.environ or os.environ["MAKEFLAGS"] != seen["makeflags"]
    seen["control_files"] = [path.name for path in seen["sources"] if path.suffix == ".vlt"]
    return seen


@pytest.mark.parametrize("fast, level", [(False, "-O0"), (True, "-O1")])
def test_the_test_profile_builds_top_only_and_lighter(monkeypatch, tmp_path, fast, level):
    planned = _planned_build(monkeypatch, tmp_path, "test", fast)
    assert planned["runner"] == "TopOnly" and planned["control_files"] == ["public_top.vlt"]
    assert f"OPT_FAST={level}" in planned["makeflags"].split()
    assert f"OPT_GLOBAL={level}" in planned["makeflags"].split()


def test_the_full_profile_builds_as_cocotb_does_or_at_o3_when_fast(monkeypatch, tmp_path):
    plain = _planned_build(monkeypatch, tmp_path, "full", fast=False)
    assert plain["runner"] == "Recorder" and plain["control_files"] == []
    assert "OPT_FAST" not in plain["makeflags"]
    fast = _planned_build(monkeypatch, tmp_path, "full", fast=True)
    assert fast["runner"] == "TopOnly" and fast["control_files"] == ["public_top.vlt"]
    assert {"OPT_FAST=-O3", "OPT_GLOBAL=-O3"} <= set(fast["makeflags"].split())
    assert "-O3" in fast["build_args"]


@pytest.mark.parametrize("fast", [False, True])
def test_the_profiles_never_share_a_build(monkeypatch, tmp_path, fast):
    folders = {_planned_build(monkeypatch, tmp_path, profile, fast)["build_dir"]
               for profile in ("full", "test")}
    assert len(folders) == 2


def test_c_sources_go_to_verilator_by_path_and_name_the_build_by_their_bytes(monkeypatch, tmp_path):
    def planned(folder, text):
        folder.mkdir(exist_ok=True)
        return _planned_build(monkeypatch, tmp_path, "full", True,
                              extra=[write_if_changed(folder / "memory.cpp", text)])
    first = planned(tmp_path / "a", "int x;\n")
    assert [path.suffix for path in first["sources"]] == [".vlt", ".v"]
    assert str(tmp_path / "a" / "memory.cpp") in first["build_args"]
    # The same bytes elsewhere are the same build; other bytes another.
    assert planned(tmp_path / "b", "int x;\n")["build_dir"] == first["build_dir"]
    assert planned(tmp_path / "c", "int y;\n")["build_dir"] != first["build_dir"]


def test_c_sources_are_refused_under_icarus(tmp_path):
    cxx = write_if_changed(tmp_path / "memory.cpp", "int x;\n")
    with pytest.raises(ValueError, match=r"C\+\+ sources \(memory.cpp\) build under Verilator only, not icarus"):
        run_cocotb(sources=[cxx], toplevel="top", test_module="unused", simulator="icarus")


class _FakeSimulator:
    """Stands for cocotb's runner: a build makes the executable and a log, a run a log and
    a results file; ``calls`` records both."""

    def __init__(self, calls):
        self.calls = calls

    def build(self, *, build_dir, hdl_toplevel, log_file, waves, **arguments):
        self.calls.append(("build", build_dir, waves))
        (build_dir / hdl_toplevel).write_text("")
        pathlib.Path(log_file).write_text("the compiler's output\n")

    def test(self, *, test_dir, log_file, waves, **arguments):
        self.calls.append(("test", test_dir.parent, waves))
        if log_file:
            pathlib.Path(log_file).write_text("the simulator's output\n")
        return test_dir / "results.xml"


@pytest.fixture
def fake_simulator(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(runner, "get_runner", lambda simulator: _FakeSimulator(calls))
    monkeypatch.setattr(runner, "_LeanVerilator", lambda: _FakeSimulator(calls))
    monkeypatch.setattr(runner, "get_results", lambda results: (1, 0))
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path / "build"))
    return calls


def _run(tmp_path, text, **options):
    source = write_if_changed(tmp_path / "top.v", text)
    return run_cocotb(sources=[source], toplevel="top", test_module="unused",
                      log_file=tmp_path / "run.log", **options)


def test_builds_say_whether_they_are_first_and_how_long_the_last_took(fake_simulator, tmp_path, capsys):
    lines = []
    with reporting(lines.append, sys.stderr):
        _run(tmp_path, "module top; endmodule\n")
        _run(tmp_path, "module top; endmodule\n")
        _run(tmp_path, "module top; wire w; endmodule\n")
    assert "top: building it under Verilator, the first build of this design (no earlier build " \
           "of it here: expect minutes); later runs reuse it" == lines[0].strip()
    assert lines[1].strip() == "top: reusing its Verilator build"
    assert re.fullmatch(r"top: building it under Verilator, the first build of this design \(the "
                        r"last build of top took [0-9.]+ m?s here\); later runs reuse it", lines[2].strip())
    assert last_build_seconds("top", "verilator") is not None
    # The compilers' and the simulator's own logs reach the command's log (standard error).
    err = capsys.readouterr().err
    assert err.count("the compiler's output") == 3 and err.count("the simulator's output") == 3


def test_outside_a_command_nothing_is_said_or_copied(fake_simulator, tmp_path, capsys):
    _run(tmp_path, "module top; endmodule\n")
    assert capsys.readouterr() == ("", "")


def test_runs_with_and_without_waves_share_a_traceable_build(fake_simulator, tmp_path):
    _run(tmp_path, "module top; endmodule\n", traceable=True, trace_scopes=["top"])
    _run(tmp_path, "module top; endmodule\n", traceable=True, trace_scopes=["top"], waves=True)
    builds = [call for call in fake_simulator if call[0] == "build"]
    tests = [call for call in fake_simulator if call[0] == "test"]
    assert len({folder for _, folder, _ in builds}) == 1 and all(waves for _, _, waves in builds)
    assert (builds[0][1] / "tracing.vlt").read_text() == \
        '`verilator_config\ntracing_off -scope "*"\ntracing_on -scope "top" -levels 1\n'
    assert [waves for _, _, waves in tests] == [False, True]
    _run(tmp_path, "module top; endmodule\n")
    assert fake_simulator[-2][0] == "build" and fake_simulator[-2][1] != builds[0][1]


def test_a_prepared_build_is_the_one_a_run_then_uses(fake_simulator, tmp_path):
    source = write_if_changed(tmp_path / "top.v", "module top; endmodule\n")
    prepare_build(sources=[source], toplevel="top", fast=True)
    assert [call[0] for call in fake_simulator] == ["build"]
    _run(tmp_path, "module top; endmodule\n", fast=True)
    assert [call[0] for call in fake_simulator] == ["build", "build", "test"]
    assert fake_simulator[0][1] == fake_simulator[1][1] == fake_simulator[2][1]
