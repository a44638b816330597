"""The soak's checks on a short round through the RTL (the harness build the batch tests
share): a round of two stages, each with a faulting kernel and an entry armed and disarmed
between chunks, passes; then each check is shown to notice a planted wrong record: a lost
GPU response, a response with the wrong data (placed in its stage, phase and cycle), a
kernel output off the golden, a fault reported with the wrong pc, a phase that ran out of
its budget, a lost event."""

import copy
import shutil

import pytest

from matndp.sim.batch import BatchResult, run_batch
from matndp.sim.flows.soak import SoakFailure, SoakSettings, check_round, draw_round
from matndp.sim.flows.soak import check as soak_check


pytestmark = pytest.mark.xdist_group("engine_slice")

SHORT = SoakSettings(stages_per_round=2, max_elements=96, fault_probability=1.0,
                     decoy_probability=1.0, watchdog=2048, long_gap=200)


@pytest.fixture(scope="module")
def short_round(tmp_path_factory):
    soak_round = draw_round(4, 1, SHORT)
    result = run_batch(soak_round.job, directory=tmp_path_factory.mktemp("soak") / "round")
    return soak_round, result


def test_a_short_round_passes_every_check(short_round):
    soak_round, result = short_round
    summary = check_round(soak_round, result)
    assert summary["stages"] == 2 and sum(summary["faults"].values()) == 2
    assert summary["engine_requests"] > 0 and summary["launches"] >= 2
    assert summary["write_events"] + summary["read_events"] > 0
    assert any(phase["reason"] == "until" for phase in result.phases())


def _changed(result, tmp_path, name=None, change=None):
    directory = tmp_path / "changed"
    shutil.copytree(result.directory, directory)
    if name is not None:
        path = directory / f"{name}.log"
        path.write_text("".join(change(path.read_text().splitlines(keepends=True))))
    changed = BatchResult(directory, result.job)
    changed.results = copy.deepcopy(result.results)
    return changed


def _fails(soak_round, result, check):
    with pytest.raises(SoakFailure) as failure:
        check_round(soak_round, result)
    assert failure.value.record["check"] == check, failure.value
    assert failure.value.record["round"] == soak_round.number
    return failure.value


def test_a_lost_response_is_caught(short_round, tmp_path):
    soak_round, result = short_round
    changed = _changed(result, tmp_path, "gpu_responses", lambda lines: lines[:3] + lines[4:])
    failure = _fails(soak_round, changed, "GPU path and memory against the reference")
    assert "GPU responses for" in failure.record["first_wrong_record"]


def test_a_wrong_response_is_caught_with_its_stage_phase_and_cycle(short_round, tmp_path):
    """The last response comes in the phase that waits for every read to be answered."""
    soak_round, result = short_round
    responses = result.log("gpu_responses")
    row = len(responses["cycle"]) - 1
    cycle = int(responses["cycle"][row])

    def flip(lines):
        line = lines[row]
        lines[row] = line[:-2] + ("0" if line[-2] != "0" else "1") + "\n"
        return lines
    failure = _fails(soak_round, _changed(result, tmp_path, "gpu_responses", flip),
                     "GPU path and memory against the reference")
    stage = soak_round.stages[failure.record["stage"]]
    assert failure.record["cycle"] == cycle
    assert failure.record["phase"] in [key for key, what in stage.phases if what == "stream"]
    assert result[failure.record["phase"]]["start_cycle"] < cycle <= result[failure.record["phase"]]["end_cycle"]
    assert f"differs first at row {row}" in failure.record["first_wrong_record"]


def test_a_wrong_kernel_output_is_caught(short_round, monkeypatch):
    soak_round, result = short_round
    golden = soak_check.golden_outputs

    def off_by_one_bit(launch, inputs, order):
        outputs = golden(launch, inputs, order)
        name = sorted(outputs)[0]
        wrong = outputs[name].copy()
        wrong.view(f"u{wrong.dtype.itemsize}")[0] ^= 1
        return dict(outputs, **{name: wrong})
    monkeypatch.setattr(soak_check, "golden_outputs", off_by_one_bit)
    failure = _fails(soak_round, result, "kernel outputs bit-exact against the golden")
    assert failure.record["stage"] == 0 and "elements differ" in str(failure)


def test_a_fault_reported_at_the_wrong_pc_is_caught(short_round, tmp_path):
    soak_round, result = short_round
    changed = _changed(result, tmp_path)
    stage = soak_round.stages[-1]
    entry, pc, cause = changed.results[stage.report_key]["error"]
    changed.results[stage.report_key]["error"] = (entry, pc + 1, cause)
    failure = _fails(soak_round, changed, "fault reported with its entry, pc and cause")
    assert failure.record["stage"] == stage.number


def test_a_phase_that_ran_out_of_cycles_is_caught(short_round, tmp_path):
    soak_round, result = short_round
    changed = _changed(result, tmp_path)
    key = soak_round.stages[0].phases[0][0]
    changed.results[key]["reason"] = "budget"
    failure = _fails(soak_round, changed, "phase ended by its stop condition")
    assert failure.record["phase"] == key and "the GPU was held" in str(failure)


def test_a_lost_event_is_caught(short_round, tmp_path):
    soak_round, result = short_round
    changed = _changed(result, tmp_path, "events", lambda lines: lines[1:])
    _fails(soak_round, changed, "events against the entries in force")
