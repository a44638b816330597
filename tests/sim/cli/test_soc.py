"""``matndp soc-sim`` and ``matndp soc``: without their tools they say what to install, and
bad input is refused, in one line, exit code 2 (the runs themselves: tests/sim/soc/,
``-m slow``)."""

import pytest

from matndp.sim.soc import flow

from .commands import exit_code


def test_missing_tools_are_named_in_one_line_with_exit_code_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(flow, "missing_tools", lambda: ["libevent-dev (system package)"])
    assert exit_code(["soc-sim", "--build", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1
    assert "soc-sim needs libevent-dev (system package); make soc-setup installs them" in error[0]
    assert list(tmp_path.iterdir()) == []


def test_soc_without_its_tools_names_them_in_one_line_with_exit_code_2(monkeypatch, capsys,
                                                                       tmp_path):
    from matndp.sim.soc import bitstream
    monkeypatch.setattr(bitstream, "missing_board_tools", lambda: ["yowasp-ecppack (make setup)"])
    assert exit_code(["soc", "--build", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1
    assert ("soc needs yowasp-ecppack (make setup); make setup and make soc-setup install "
            "them") in error[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("arguments, message", [
    (["--seed", "-1"], "must be an integer in 0..2147483647, got '-1'"),
    (["--seed", "2147483648"], "must be an integer in 0..2147483647, got '2147483648'"),
    (["--seed", "one"], "must be an integer in 0..2147483647, got 'one'"),
    (["--gateware-only=yes"], "ignored explicit argument 'yes'"),
    (["--clock-mhz", "9"], "--clock-mhz: must be an integer in 10..100, got '9'"),
    (["--clock-mhz", "30.5"], "--clock-mhz: must be an integer in 10..100, got '30.5'"),
    (["--route-timeout", "0"], "--route-timeout: route timeout must be > 0 s, got 0.0"),
    (["--route-timeout", "an hour"], "route timeout must be a number, got 'an hour'"),
])
def test_soc_refuses_a_bad_seed_clock_or_option_in_one_line_with_exit_code_2(
        arguments, message, capsys, tmp_path):
    assert exit_code(["soc", "--build", str(tmp_path), *arguments]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0], error
    assert list(tmp_path.iterdir()) == []
