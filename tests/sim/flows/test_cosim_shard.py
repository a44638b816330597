"""The whole iteration as a job per block: the same report one after another here or on
two worker processes, a failing job named by its block, and a stopped run resumed from
the jobs it finished. On the two-layer MLP of test_cosim.py (three blocks), with tiering
stalls and page copies."""

import json
import pickle
from dataclasses import replace

import pytest

from matndp.hw.config import SLICE_VARIABLE
from matndp.sim.batch import run as batch_run
from matndp.sim.batch.parameters import HarnessShape
from matndp.sim.flows.cosim.iteration import share_blocks
from matndp.sim.flows.cosim import shard
from matndp.sim.flows.cosim.report import TIMING_FIELDS
from matndp.sim.flows.cosim.run import jobs_folder, run_cosim_iteration
from matndp.sim.flows.cosim.setup import CosimSetup
from matndp.sim.flows.cosim.shard import BlockJob, JobsFailed
from matndp.sim.sweep.runners import LocalPool

from .test_cosim import SLICES, mlp


pytestmark = pytest.mark.xdist_group("engine_slice")

SETUP = CosimSetup(slices=SLICES, policy="tm", hbm_fraction=0.9)


def _quiet(*args):
    pass


def _without_timing(value):
    if isinstance(value, dict):
        return {key: _without_timing(item) for key, item in value.items() if key not in TIMING_FIELDS}
    if isinstance(value, list):
        return [_without_timing(item) for item in value]
    return value


def _outputs(folder):
    report = json.loads((folder / "report.json").read_text())
    # The markdown's wall-time paragraph is the one part of it that is timing.
    markdown = [line for line in (folder / "report.md").read_text().splitlines()
                if not line.startswith("Wall time:")]
    return _without_timing(report), markdown, (folder / "calibration.json").read_text()


def _run(output, graph, shares, runner=None):
    return run_cosim_iteration(output, shares=shares, graph=graph, runner=runner,
                               progress=_quiet, job_progress=_quiet)


@pytest.fixture(scope="module")
def planned():
    graph = mlp(64)
    return graph, share_blocks(SETUP, graph)


@pytest.fixture(scope="module")
def pooled(planned, tmp_path_factory):
    """The iteration's jobs on a local pool of two workers, which plan their blocks themselves."""
    graph, shares = planned
    output = tmp_path_factory.mktemp("pooled") / "cosim"
    return output, _run(output, graph, shares, LocalPool(2))


def test_two_workers_give_the_serial_run_s_report(planned, pooled, tmp_path):
    graph, shares = planned
    serial = _run(tmp_path / "serial", graph, shares)
    assert [block["block"] for block in serial["blocks"]] == ["fc1", "fc2", "loss"]
    assert serial["checks"]["launches_bit_exact"] == sum(
        len(stage.launches) for share in shares for step in share.steps for stage in step.stages) > 0
    assert serial["checks"]["dumps_checked"] == 3
    assert sum(block["stall_cycles"] for block in serial["blocks"]) == \
        sum(step.stall_cycles for share in shares for step in share.steps) > 0
    # The MLP's blocks merge nothing: the RTL saves nothing.
    busy = sum(block["rtl_cycles"] for block in serial["blocks"])
    planned = {key: sum(share.overlap[key] for share in shares) for key in ("serial_cycles", "overlapped_cycles")}
    assert serial["overlap"] == {"on": True, "merged": 0, "rtl_busy_cycles": busy, "rtl_serial_busy_cycles": busy,
                                 "rtl_saved_cycles": 0, "host_serial_cycles": planned["serial_cycles"],
                                 "host_overlapped_cycles": planned["overlapped_cycles"],
                                 "host_saved_cycles": planned["serial_cycles"] - planned["overlapped_cycles"],
                                 "achieved": serial["overlap"]["achieved"]}
    assert _outputs(tmp_path / "serial") == _outputs(pooled[0])
    # The pool's workers ran the jobs, not this process.
    assert {job["worker"] for job in pooled[1]["jobs"]}.isdisjoint({job["worker"] for job in serial["jobs"]})
    assert not jobs_folder(tmp_path / "serial").exists() and not jobs_folder(pooled[0]).exists()


@pytest.mark.slow
def test_a_local_ray_instance_gives_the_pool_s_report(planned, pooled, tmp_path):
    pytest.importorskip("ray", reason="ray is not importable; `make setup` installs it")
    from matndp.sim.sweep.runners import RayCluster
    graph, shares = planned
    on_ray = _run(tmp_path / "ray", graph, shares, RayCluster("local", 2))
    assert _outputs(tmp_path / "ray") == _outputs(pooled[0])
    assert len(on_ray["jobs"]) == 3


_RUN_BATCH = batch_run.run_batch


def _counting_runs(monkeypatch, fail=None, stop=None):
    """Count the harness runs by block; fail (an exception) the one of block ``fail``, or
    stop (Ctrl-C) at the one of block ``stop``."""
    ran = []

    def run_batch(job, *, directory=None, **options):
        block = str(directory).rsplit("-", 1)[-1]
        if block == stop:
            raise KeyboardInterrupt
        ran.append(block)
        if block == fail:
            raise RuntimeError("the simulator died")
        return _RUN_BATCH(job, directory=directory, **options)
    monkeypatch.setattr(batch_run, "run_batch", run_batch)
    return ran


def test_a_failing_job_is_named_and_a_stopped_run_resumes_from_the_jobs_done(planned, pooled, tmp_path,
                                                                              monkeypatch):
    graph, shares = planned
    output = tmp_path / "cosim"
    ran = _counting_runs(monkeypatch, fail="fc2")
    with pytest.raises(JobsFailed) as failed:
        _run(output, graph, shares)
    assert failed.value.failures == [("fc2", "RuntimeError: the simulator died")]
    assert "block fc2: RuntimeError: the simulator died" in str(failed.value)
    assert ran == ["fc1", "fc2", "loss"]
    assert len(list(jobs_folder(output).glob("*.json"))) == 2
    assert not output.exists()
    # Stopped at the one job left: the finished ones stay.
    ran = _counting_runs(monkeypatch, stop="fc2")
    with pytest.raises(KeyboardInterrupt):
        _run(output, graph, shares)
    assert ran == [] and len(list(jobs_folder(output).glob("*.json"))) == 2
    told = []
    ran = _counting_runs(monkeypatch)
    run_cosim_iteration(output, shares=shares, graph=graph, progress=_quiet,
                        job_progress=lambda line, done, total: told.append(
                            (line["block"], line.get("resumed", False), done, total)))
    assert ran == ["fc2"]
    assert told == [("fc1", True, 1, 3), ("loss", True, 2, 3), ("fc2", False, 3, 3)]
    assert not jobs_folder(output).exists()
    assert _outputs(output) == _outputs(pooled[0])


def test_a_job_is_keyed_by_everything_its_result_depends_on():
    shape = HarnessShape()
    job = BlockJob(SETUP, 0, shape)
    assert job.key == BlockJob(SETUP, 0, shape).key
    others = [BlockJob(SETUP, 1, shape), BlockJob(CosimSetup(slices=SLICES, policy="ideal"), 0, shape),
              BlockJob(SETUP, 0, HarnessShape(regions=2 * shape.regions)),
              BlockJob(SETUP, 0, shape, "icarus"), BlockJob(SETUP, 0, shape, graph=mlp(64)),
              BlockJob(SETUP, 0, shape, graph=mlp(32)), BlockJob(replace(SETUP, overlap=False), 0, shape),
              BlockJob(SETUP, 0, shape, slice_config="channel")]
    assert len({job.key} | {other.key for other in others}) == 1 + len(others)


def test_a_worker_on_another_slice_fails_the_job_naming_both(monkeypatch):
    monkeypatch.setenv(SLICE_VARIABLE, "channel")
    job = BlockJob(SETUP, 0, HarnessShape())
    assert job.slice_config == "channel"
    monkeypatch.setenv(SLICE_VARIABLE, "fpga")
    result = shard.run_block_job(job)
    assert (result["status"], result["error"]) == (
        "failed", "RuntimeError: the job is for the channel slice; this worker's MATNDP_SLICE names fpga")


def test_a_change_of_the_code_is_another_job_but_not_while_it_runs(monkeypatch):
    job = BlockJob(SETUP, 0, HarnessShape())
    key = job.key
    monkeypatch.setattr(shard, "_project_code", lambda: "other code")
    assert BlockJob(SETUP, 0, HarnessShape()).key != key
    # a worker given the job keeps the key it was made with, whatever the code is now
    assert pickle.loads(pickle.dumps(job)).key == key


@pytest.mark.parametrize("fields, error, message", [
    ({"setup": {"block": "fc1"}}, TypeError, "a block job's setup is a CosimSetup"),
    ({"number": -1}, ValueError, "number must be an integer >= 0, not -1"),
    ({"number": True}, ValueError, "number must be an integer >= 0, not True"),
    ({"simulator": "modelsim"}, ValueError, "unknown simulator 'modelsim'"),
    ({"slice_config": "huge"}, ValueError,
     "unknown slice configuration 'huge'; known: default, channel, fpga"),
])
def test_a_job_that_cannot_run_is_refused(fields, error, message):
    arguments = {"setup": SETUP, "number": 0, "shape": HarnessShape(), **fields}
    with pytest.raises(error, match=message):
        BlockJob(**arguments)
