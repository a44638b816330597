"""Several slices' shares side by side: the spread of their cycles worked out by hand, a
block on two slices through the RTL (each checked, the report's spread), the whole
iteration on two slices, and a failing job named by its block and slice."""

import json
from dataclasses import replace

import pytest

from matndp.sim.batch.parameters import HarnessShape
from matndp.sim.flows.cosim import shard
from matndp.sim.flows.cosim.iteration import share_blocks, share_iteration
from matndp.sim.flows.cosim.run import jobs_folder, run_cosim, run_cosim_iteration
from matndp.sim.flows.cosim.setup import CosimSetup
from matndp.sim.flows.cosim.shard import BlockJob, JobsFailed, run_block_jobs
from matndp.sim.flows.cosim.slices import SliceMeasures, slice_spread

from .test_cosim import mlp


pytestmark = pytest.mark.xdist_group("engine_slice")

SETUP = CosimSetup(block="fc1", slices=3, policy="ideal", hbm_fraction=0.9)


def _quiet(*args):
    pass


def _op(name, cycles, rides_on=None, own_step=None, concurrent_with=None):
    """An op's measurements; one riding on another for its first phase may have a step of its
    own for the rest (a batch-norm's bn_apply sweep); a step merged with a concurrent one's
    first stage is a step of its own too."""
    own = own_step if own_step is not None else rides_on is None
    measured_as = (f"first stage with {concurrent_with}" if concurrent_with else
                   "own step" if own else f"rides on {rides_on}")
    return {"op": name, "where": "gpu", "host_cycles": 100, "rtl_cycles": cycles,
            "measured_as": measured_as, "own_step": own, "rides_on": rides_on}


def test_the_spread_of_the_slices_cycles_worked_out_by_hand():
    def slice_measures(index, a, sweep, apply):
        # Steps: a (b rides on it), c's sweep (none where the slice holds none of its
        # trigger) merged with a's first stage, e's own step after riding on a.
        steps = [{"rtl_cycles": a}, {"rtl_cycles": sweep or 0}, {"rtl_cycles": apply}]
        return SliceMeasures(index, a + (sweep or 0) + apply + 7, steps,
                             [_op("a", a), _op("b", a, rides_on="a"), _op("c", sweep, concurrent_with="a"),
                              _op("d", None), _op("e", apply, rides_on="a", own_step=True)])
    spread = slice_spread([slice_measures(0, 50, 30, 9), slice_measures(40, 52, 20, 9),
                           slice_measures(80, 51, None, 8)], 160)
    assert spread["slices"] == [0, 40, 80] and spread["of"] == 160
    ops = {op["op"]: op["rtl_cycles"] for op in spread["ops"]}
    assert set(ops) == {"a", "b", "c", "e"}, "an op no slice ran is left out"
    assert ops["a"] == {"min": 50, "median": 51.0, "max": 52, "slowest_slice": 40, "by_slice": [50, 52, 51]}
    # Slice 80 holds none of c's trigger: 0 cycles there.
    assert ops["c"] == {"min": 0, "median": 20.0, "max": 30, "slowest_slice": 0, "by_slice": [30, 20, 0]}
    assert spread["busy_cycles"]["by_slice"] == [89, 81, 59]
    assert spread["cycles"]["by_slice"] == [96, 88, 66]
    assert spread["busy_cycles"]["slowest_slice"] == 0
    # b has no step of its own (its cycles are a's): counted in a's, not again.
    assert spread["slowest_per_op_cycles"] == 52 + 30 + 9 and spread["host_cycles"] == 300


@pytest.fixture(scope="module")
def two_slices(tmp_path_factory):
    """fc1 of the MLP on slices 0 and 2 of 3: slice 0 as make sim runs it, slice 2 as a job."""
    share = share_iteration(SETUP, graph=mlp(32))
    output = tmp_path_factory.mktemp("slices") / "cosim"
    return output, run_cosim(output, share=share, window=None, slices=[0, 2], progress=_quiet,
                             job_progress=_quiet)


def test_a_block_on_two_slices_is_checked_on_both_and_reported_side_by_side(two_slices):
    output, report = two_slices
    launches = {index: sum(len(stage.launches) for step in share_iteration(
        CosimSetup(**{**SETUP.as_dict(), "slice_index": index}), graph=mlp(32)).steps for stage in step.stages)
        for index in (0, 2)}
    spread = report["slice_spread"]
    assert spread["slices"] == [0, 2] and spread["of"] == 3
    assert spread["launches_bit_exact"] == launches[0] + launches[2] > launches[0]
    assert report["checks"]["launches_bit_exact"] == launches[0]
    for op in spread["ops"]:
        cycles = op["rtl_cycles"]
        assert cycles["min"] <= cycles["median"] <= cycles["max"] == max(cycles["by_slice"])
        assert cycles["by_slice"][[0, 2].index(cycles["slowest_slice"])] == cycles["max"]
    assert spread["busy_cycles"]["by_slice"][0] == report["measures"]["rtl_busy_cycles"]
    retimed = spread["retimed_slowest"]
    assert retimed["baseline_s"] == report["retimed"]["baseline_s"]
    assert set(retimed["kernels"]) == set(report["measures"]["kernels"])
    for name, cost in retimed["kernels"].items():
        assert cost["host_cycles_per_packet"] == report["measures"]["kernels"][name]["host_cycles_per_packet"]
    assert json.loads((output / "report.json").read_text())["slice_spread"]["slices"] == [0, 2]
    assert "## Slices" in (output / "report.md").read_text()
    assert not jobs_folder(output).exists()


def test_a_failing_job_is_named_by_its_block_and_slice(monkeypatch):
    def run_block_job(job, directory=None, share=None):
        failed = job.slice_index == 2 and job.block == "fc2"
        return {"key": job.key, "block": job.block, "number": job.number, "slice": job.slice_index,
                "status": "failed" if failed else "ok", "error": "RuntimeError: the simulator died"}
    monkeypatch.setattr(shard, "run_block_job", run_block_job)
    jobs = [BlockJob(CosimSetup(**{**SETUP.as_dict(), "block": block, "slice_index": index}), number,
                     HarnessShape()) for index in (0, 2) for number, block in enumerate(("fc1", "fc2"))]
    assert len({job.key for job in jobs}) == 4, "the slice is part of a job's key"
    with pytest.raises(JobsFailed) as failed:
        run_block_jobs(jobs)
    assert failed.value.failures == [("fc2 on slice 2", "RuntimeError: the simulator died")]


def _addresses(share):
    return [tuple(stage.addr.tolist()) for step in share.steps for stage in step.stages]


def test_a_worker_running_several_slices_jobs_gives_each_its_own_share():
    """A worker process keeps the iteration's plan for its next jobs; one given jobs of
    several slices (slice-major, as a run deals them) must still deal each its own share:
    fc1's 32 rows over 3 slices are 11 on slice 0 and 10 on slice 2."""
    graph = mlp(32)
    own = {index: _addresses(share_blocks(replace(SETUP, slice_index=index), graph)[0])
           for index in (0, 2)}
    assert own[0] != own[2]
    for index in (0, 2, 0):
        job = BlockJob(replace(SETUP, slice_index=index), 0, HarnessShape(), graph=graph)
        assert _addresses(shard.share_block(shard._iteration_plan(job), job.block, job.number)) == own[index]


def iteration_on_slices(folder, graph, slices, setup=SETUP):
    """The whole iteration of ``graph`` on ``slices``, quietly: its shares and its report."""
    shares = share_blocks(setup, graph)
    return shares, run_cosim_iteration(folder, shares=shares, graph=graph, slices=slices,
                                       progress=_quiet, job_progress=_quiet)


@pytest.mark.slow
def test_the_whole_iteration_on_two_slices(tmp_path):
    shares, report = iteration_on_slices(tmp_path / "cosim", mlp(32), [0, 2])
    assert [(job["block"], job["slice"]) for job in report["jobs"]] == \
        [(block, index) for index in (0, 2) for block in ("fc1", "fc2", "loss")]
    spread = report["slice_spread"]
    assert spread["slices"] == [0, 2]
    assert spread["cycles"]["by_slice"][0] == report["cycles"] == sum(block["cycles"] for block in report["blocks"])
    launches = {index: sum(len(stage.launches) for share in share_blocks(replace(SETUP, slice_index=index), mlp(32))
                           for step in share.steps for stage in step.stages) for index in (0, 2)}
    assert launches[0] != launches[2], "the test needs slices holding different shares"
    assert report["checks"]["launches_bit_exact"] == launches[0]
    assert spread["launches_bit_exact"] == launches[0] + launches[2]
    assert "## Slices" in (tmp_path / "cosim" / "report.md").read_text()


def test_a_gpu_op_a_slice_holds_none_of_idles_the_slice_for_its_time():
    """At batch 2 the convolution-and-batch-norm graph's logits are two sectors over three
    slices: slice 2 holds none of the loss's tensors, so the loss's GPU stage there has no
    request and spends the op's scheduled time idle."""
    from dataclasses import replace
    from .test_cosim_combine import SETUP as CONVBN, convbn
    shares = share_blocks(replace(CONVBN, slice_index=2), graph=convbn(2))
    empty = [(step, stage) for share in shares for step in share.steps for stage in step.stages
             if stage.kind == "gpu" and len(stage) == 0]
    assert empty, "the test needs a GPU op this slice holds nothing of"
    for step, stage in empty:
        assert not stage.launches and stage.idle_after == step.host_cycles > 0


@pytest.mark.slow
def test_the_whole_iteration_on_a_slice_holding_none_of_an_op(tmp_path):
    from .test_cosim_combine import SETUP as CONVBN, convbn
    _, report = iteration_on_slices(tmp_path / "cosim", convbn(2), [0, 2], CONVBN)
    assert report["slice_spread"]["slices"] == [0, 2] and report["checks"]["launches_bit_exact"] > 0
