"""``matndp soak``: a short soak through the RTL with its report, the seed printed, and bad
options as exit code 2."""

import json

import pytest

from tests.sim.cli.commands import exit_code


@pytest.mark.parametrize("arguments, message", [
    (["--seed", "-1"], "argument --seed: must be an integer in 0..4294967295, got '-1'"),
    (["--cycles", "0"], "argument --cycles: must be an integer in 1..1099511627776, got '0'"),
    (["--cycles", "lots"], "argument --cycles: must be an integer"),
    (["--round", "x"], "argument --round: must be an integer"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
])
def test_bad_options_are_exit_code_2_with_one_line(capsys, arguments, message):
    assert exit_code(["soak", *arguments]) == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error


@pytest.mark.rtl
@pytest.mark.xdist_group("engine_slice")
def test_a_short_soak_reports_in_json_and_in_a_summary_line(tmp_path, capsys):
    assert exit_code(["soak", "--seed", "12", "--cycles", "1", "--output", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["seed"] == 12 and report["passed"] and report["rounds"] == 1
    assert report["cycles"] > 0 and report["cycles_per_second"] > 0 and report["failure"] is None
    assert exit_code(["soak", "--seed", "12", "--round", "0", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "soak: seed 12"
    assert out[1].startswith(f"soak: seed 12: {report['cycles']:,} cycles in 1 rounds (1 stages), ")
    assert "cycles/s (" in out[1] and "per CPU second" in out[1] and out[-1] == "PASS"


def test_without_a_seed_a_fresh_one_is_printed(tmp_path, capsys, monkeypatch):
    import matndp.sim.flows.soak as soak
    from matndp.sim.flows.soak.run import SoakReport
    monkeypatch.setattr(soak, "run_soak", lambda seed, cycles, **options: SoakReport(seed, cycles))
    assert exit_code(["soak", "--cycles", "5", "--output", str(tmp_path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("soak: seed ") and int(first.split()[-1]) >= 0


def test_a_failure_is_exit_code_1_naming_the_reproducer(tmp_path, capsys, monkeypatch):
    import matndp.sim.flows.soak as soak
    from matndp.sim.flows.soak.run import SoakReport

    def failing(seed, cycles, **options):
        return SoakReport(seed, cycles, failure={"message": "round 2, stage 5: planted",
                                                 "reproducer": "somewhere/reproducer.json",
                                                 "replay": "matndp soak --seed 7 --round 2"})
    monkeypatch.setattr(soak, "run_soak", failing)
    assert exit_code(["soak", "--seed", "7", "--output", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "soak: FAIL: round 2, stage 5: planted"
    assert out[-1] == ("soak: reproducer: somewhere/reproducer.json; replay: "
                       "matndp soak --seed 7 --round 2")
    assert exit_code(["soak", "--seed", "7", "--output", str(tmp_path), "--json"]) == 1
    assert '"passed": false' in capsys.readouterr().out
