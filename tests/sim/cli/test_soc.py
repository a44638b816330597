"""``matndp soc-sim``: without its tools it says what to install, in one line, exit code 2
(the run itself: tests/sim/soc/test_flow.py, ``-m slow``)."""

from matndp.sim.soc import flow

from .commands import exit_code


def test_missing_tools_are_named_in_one_line_with_exit_code_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(flow, "missing_tools", lambda: ["libevent-dev (system package)"])
    assert exit_code(["soc-sim", "--build", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1
    assert "soc-sim needs libevent-dev (system package); make soc-setup installs them" in error[0]
    assert list(tmp_path.iterdir()) == []
