"""The soak's rounds: a failure writes its reproducer and ends the soak, a pass removes the
run's folder; and, under ``-m slow``, a long soak through the RTL."""

import json

import pytest

from matndp.sim.flows.soak import SoakFailure, SoakSettings, run_soak
from matndp.sim.flows.soak import run as soak_run
from matndp.sim.flows.soak.faults import FAULT_KERNELS


class _Result:
    cycles = 0
    phase_wall_s = 0.0


def _fake_run(job, *, simulator, directory):
    directory.mkdir(parents=True)
    (directory / "gpu_responses.log").write_text("")
    return _Result()


def _summary(cycles):
    return {"stages": 1, "cycles": cycles, "gpu_requests": 10, "gpu_reads_answered": 4,
            "engine_requests": 3, "launches": 2, "decoys": 1, "faults": {"watchdog": 1}}


def test_rounds_run_until_the_cycles_are_reached(tmp_path, monkeypatch):
    monkeypatch.setattr(soak_run, "run_batch", _fake_run)
    monkeypatch.setattr(soak_run, "check_round", lambda soak_round, result: _summary(400))
    report = run_soak(9, 1000, settings=SoakSettings(stages_per_round=1), directory=tmp_path)
    assert (report.rounds, report.cycles, report.launches, report.faults) == (3, 1200, 6, {"watchdog": 3})
    assert report.passed and not list(tmp_path.glob("round-*"))
    assert report.cpu_s > 0 and report.as_dict()["cycles_per_cpu_second"] > 0


def test_a_failure_writes_its_reproducer_and_ends_the_soak(tmp_path, monkeypatch):
    monkeypatch.setattr(soak_run, "run_batch", _fake_run)
    calls = []

    def check(soak_round, result):
        calls.append(soak_round.number)
        if soak_round.number == 1:
            raise SoakFailure("round 1: planted", {"seed": 9, "round": 1, "check": "planted",
                                                   "stage": 0, "phase": None,
                                                   "first_wrong_record": "row 3"})
        return _summary(10)
    monkeypatch.setattr(soak_run, "check_round", check)
    report = run_soak(9, 10_000, settings=SoakSettings(stages_per_round=1), directory=tmp_path)
    assert calls == [0, 1] and not report.passed
    written = json.loads((tmp_path / soak_run.REPRODUCER_FILE).read_text())
    assert written["seed"] == 9 and written["round"] == 1 and written["first_wrong_record"] == "row 3"
    assert written["replay"] == "matndp soak --seed 9 --round 1"
    assert written["reproducer"] == str(tmp_path / soak_run.REPRODUCER_FILE)
    assert (tmp_path / "round-1").is_dir()


def test_a_round_replays_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(soak_run, "run_batch", _fake_run)
    seen = []
    monkeypatch.setattr(soak_run, "check_round",
                        lambda soak_round, result: seen.append(soak_round.number) or _summary(5))
    run_soak(9, 1, settings=SoakSettings(stages_per_round=1), directory=tmp_path, rounds=[4])
    assert seen == [4]


@pytest.mark.slow
@pytest.mark.xdist_group("engine_slice")
def test_a_long_soak(tmp_path):
    report = run_soak(2026, 2_000_000, directory=tmp_path)
    assert report.passed, report.failure
    assert report.cycles >= 2_000_000 and set(report.faults) == set(FAULT_KERNELS)
