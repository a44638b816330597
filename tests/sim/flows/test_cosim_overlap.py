"""Steps the host model schedules at the same time, run as one stage.

Which steps merge is worked out by hand on a hand-built plan; the merged stage's request
times by hand on a small stage; a small residual block (a convolution and its batch-norm,
beside an independent shortcut convolution) runs through the RTL with overlap and without,
every check passing, and its merged steps again one after another for the report and for
a block job's result."""

import json
import types

import numpy as np
import pytest

from matndp.host.zoo.builder import GraphBuilder
from matndp.sim.flows.cosim.iteration import GAP_LIMIT, Stage, Step, share_iteration
from matndp.sim.flows.cosim.measure import merged_sweeps, share_measures
from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.flows.cosim.overlap import (concurrent_steps, launches_fit, merge_stages, overlap_steps,
                                            planned_overlap, serial_share, side_by_side, stage_times)
from matndp.sim.flows.cosim.report import write_report
from matndp.sim.flows.cosim import shard
from matndp.sim.batch.parameters import HarnessShape
from matndp.sim.flows.kernel_run import Launch, plan_launches
from matndp.sim.flows.cosim.setup import CosimError, CosimSetup
from matndp.sim.flows.cosim.share_run import run_share


pytestmark = pytest.mark.xdist_group("engine_slice")

US = 1e-6
SECTOR = KERNEL_CONFIG.sector_bytes


# --- a hand-built plan ------------------------------------------------------------------------
def _stage(kind, label, count, launches=1, gap=0):
    return Stage(kind, label, [object()] * launches, np.arange(count, dtype=np.uint64) * 32,
                 np.zeros(count, dtype=bool), np.zeros((count, 32), dtype=np.uint8),
                 np.zeros(count, dtype=np.uint64), np.full(count, kind, dtype="<U9"),
                 np.full(count, gap, dtype=np.uint64))


def _step(op, where, stages, riders=(), stall=0):
    return Step(op, where, "forward", 0, stall, stages, list(riders))


def _plan():
    """Ops (deps), where each runs and when (µs):

    a      gpu  0-10            (nothing)
    a.bn   ndp  10-14  rides:   on a's writes; its sweep 10-14 (NDP item a.bn)
    b      gpu  10-20           (nothing)     -> overlaps a.bn, independent: merge
    c      gpu  20-30           a.bn
    c.use  ndp  22-26           c             -> overlaps c, but needs c's output: no
    d      gpu  30-40           b
    e      ndp  40-44           a             -> independent of d, after it: no
    """
    ops = {"a": (), "a.bn": ("a",), "b": (), "c": ("a.bn",), "c.use": ("c",), "d": ("b",), "e": ("a",)}
    graph = types.SimpleNamespace(ops=[types.SimpleNamespace(name=name, deps=deps) for name, deps in ops.items()])
    times = {"a": (0, 10), "a.bn": (0, 14), "b": (10, 20), "c": (20, 30), "c.use": (22, 26), "d": (30, 40),
             "e": (40, 44)}
    schedule = {name: types.SimpleNamespace(start_s=s * US, end_s=e * US) for name, (s, e) in times.items()}
    ndp_items = {"a.bn": (10, 14), "c.use": (22, 26), "e": (40, 44)}
    busy = [types.SimpleNamespace(op=name, start_s=s * US, end_s=e * US) for name, (s, e) in ndp_items.items()]
    where = {"a": "gpu", "a.bn": "on_the_fly", "b": "gpu", "c": "gpu", "c.use": "ndp", "d": "gpu", "e": "ndp"}
    placements = {name: types.SimpleNamespace(where=w, carrier=types.SimpleNamespace(op=name))
                  for name, w in where.items()}
    plan = types.SimpleNamespace(placements=placements, ndp_busy=busy)
    steps = [_step("a", "gpu", [_stage("gpu", "a", 4, gap=9)], riders=["a.bn"]),
             _step("a.bn", "on_the_fly", [_stage("sweep", "a.bn: bn_apply", 3)], stall=5),
             _step("b", "gpu", [_stage("gpu", "b", 3, gap=9)], stall=7),
             _step("c", "gpu", [_stage("gpu", "c", 2, gap=9)]),
             _step("c.use", "ndp", [_stage("sweep", "c.use: relu_fwd", 2)]),
             _step("d", "gpu", [_stage("gpu", "d", 2, gap=9)]),
             _step("e", "ndp", [_stage("sweep", "e: relu_fwd", 2), _stage("sweep", "e: second", 2)])]
    return graph, plan, schedule, steps


def _fits(plans):
    return len(plans) <= 16


def test_a_gpu_op_and_an_independent_ndp_op_scheduled_together_merge_and_no_other_pair():
    graph, plan, schedule, steps = _plan()
    (group,) = concurrent_steps(steps, graph, plan, schedule, _fits)
    assert (steps[group.gpu].op, [steps[n].op for n in group.ndp]) == ("b", ["a.bn"])
    assert group.planned_s == pytest.approx((4 * US,))


def test_no_merge_beyond_the_trigger_entries():
    graph, plan, schedule, steps = _plan()
    steps[2].stages[0].launches = [object()] * 16
    assert concurrent_steps(steps, graph, plan, schedule, _fits) == []


def test_an_ndp_op_does_not_move_across_a_step_it_depends_on():
    graph, plan, schedule, steps = _plan()
    # e (after d in the steps) made to overlap b: between them c depends on a.bn, not on e's
    # ancestors... but e now needs c's output: it cannot move before c.
    graph.ops[-1].deps = ("c",)
    plan.ndp_busy[-1].start_s, plan.ndp_busy[-1].end_s = 12 * US, 18 * US
    plan.ndp_busy[0].start_s = plan.ndp_busy[0].end_s = 10 * US     # a.bn no longer overlaps b
    assert concurrent_steps(steps, graph, plan, schedule, _fits) == []
    graph.ops[-1].deps = ("a",)
    (group,) = concurrent_steps(steps, graph, plan, schedule, _fits)
    assert [steps[n].op for n in group.ndp] == ["e"]


def test_merged_steps_keep_their_order_stalls_and_further_stages():
    graph, plan, schedule, steps = _plan()
    merged, _, serial = overlap_steps(steps, graph, plan, schedule, interval=4, gap_limit=GAP_LIMIT, fits=_fits,
                                      rebase=list)
    assert [step.op for step in merged] == ["a", "b", "a.bn", "c", "c.use", "d", "e"]
    b, a_bn = merged[1], merged[2]
    assert b.stall_cycles == 7 + 5 and a_bn.stall_cycles == 0
    assert a_bn.stages == [] and a_bn.concurrent_with == "b"
    assert b.stages[0].label == "b + a.bn: bn_apply" and len(b.stages[0].launches) == 2
    assert len(b.stages[0]) == 3 + 3
    # The steps as they were, for the run that measures what the merge saved: no stalls.
    assert [(step.op, len(step.stages), step.stall_cycles) for step in serial] == [("b", 1, 0), ("a.bn", 1, 0)]
    assert serial[0].stages == steps[2].stages


def test_the_sweep_spreads_over_the_gpu_stream_in_the_cycles_between():
    gpu = _stage("gpu", "g", 3, gap=9)            # offered at cycles 9, 19, 29
    assert stage_times(gpu.gap).tolist() == [9, 19, 29]
    sweep = _stage("sweep", "s", 3)
    sweep.addr = sweep.addr + 1000
    merged = merge_stages(gpu, [sweep], interval=4, gap_limit=GAP_LIMIT, rebase=list)
    # The GPU's 30 cycles over 3 sweep requests: at 0, 10 and 20.
    assert stage_times(merged.gap).tolist() == [0, 9, 10, 19, 20, 29]
    assert merged.source.tolist() == ["sweep", "gpu", "sweep", "gpu", "sweep", "gpu"]
    assert merged.addr.tolist() == [1000, 0, 1032, 32, 1064, 64]
    assert merged.kind == "gpu" and merged.idle_after == 0
    # A tie: the GPU's request first, the sweep's the cycle after; two sweeps each spread.
    other = _stage("sweep", "t", 1)
    tied = merge_stages(_stage("gpu", "g", 1), [other, _stage("sweep", "u", 2)], interval=4, gap_limit=GAP_LIMIT,
                        rebase=list)
    assert stage_times(tied.gap).tolist() == [0, 1, 2, 3] and tied.label == "g + t + u"
    assert tied.source.tolist() == ["gpu", "sweep", "sweep", "sweep"]
    # No GPU request: one memory slot a sweep request.
    alone = merge_stages(_stage("gpu", "g", 0), [_stage("sweep", "s", 3)], interval=4, gap_limit=GAP_LIMIT,
                         rebase=list)
    assert stage_times(alone.gap).tolist() == [0, 4, 8]


def test_a_gap_the_field_cannot_hold_goes_after_the_merged_stage():
    gpu = _stage("gpu", "g", 2, gap=GAP_LIMIT)
    gpu.idle_after = 5
    merged = merge_stages(gpu, [_stage("sweep", "s", 1)], interval=4, gap_limit=100, rebase=list)
    assert merged.gap.tolist() == [0, 100, 100] and merged.idle_after == 5 + (GAP_LIMIT - 1 - 100) + (GAP_LIMIT - 100)


def test_the_planned_serial_time_counts_an_ndp_item_once():
    graph, plan, schedule, steps = _plan()
    # An op fused into a.bn's NDP work item: its step's interval is the item's.
    plan.placements["a.fused"] = types.SimpleNamespace(where="ndp", carrier=types.SimpleNamespace(op="a.bn"))
    steps.insert(2, _step("a.fused", "ndp", [_stage("sweep", "a.fused: relu_fwd", 3)]))
    # a 0-10, a.bn (and a.fused) 10-14, b 10-20, c 20-30, c.use 22-26, d 30-40, e 40-44 at
    # 1 GHz: 52 µs one after another, 44 µs as scheduled (a.bn beside b, c.use beside c).
    assert planned_overlap(steps, plan, schedule, 1e9) == {"serial_cycles": 52_000, "overlapped_cycles": 44_000}


def test_overlap_must_be_a_bool():
    with pytest.raises(CosimError, match="overlap must be True or False, not 1"):
        CosimSetup(overlap=1)


# --- a residual block through the RTL ---------------------------------------------------------
def residual(batch=2):
    builder = GraphBuilder("residual", batch=batch, dtype="fp32", optimizer="sgd_momentum")
    x = builder.input("x", (batch, 16, 8, 8))
    labels = builder.input("labels", (batch,), "int64")
    main = builder.batchnorm("blk.0.bn1", builder.conv2d("blk.0.conv1", x, 32, 3, padding=1))
    shortcut = builder.batchnorm("blk.0.bn2", builder.conv2d("blk.0.downsample", x, 32, 1))
    out = builder.relu("blk.0.relu", builder.add("blk.0.add", main, shortcut))
    logits = builder.linear("fc", builder.adaptive_avgpool("pool", out, 1, 1), 10, flatten=True)
    return builder.finish(builder.cross_entropy("loss", logits, labels), {"logits": logits})


def residual_share(overlap, pressure=0.3):
    return share_iteration(CosimSetup(block="blk.0", slices=16, policy="ideal", hbm_fraction=0.9,
                                      pressure=pressure, overlap=overlap), graph=residual())


def test_the_residual_block_merges_its_independent_pairs_only():
    merged = residual_share(True).overlap["merged"]
    # bn1's bn_apply (after riding on conv1) beside the shortcut convolution; bn1's backward
    # statistics beside the shortcut's weight gradient; the shortcut weight's optimizer step
    # beside conv1's weight gradient. bn2 (on the shortcut's output) never merges with it.
    assert [(group["gpu"], group["ndp"]) for group in merged] == [
        ("blk.0.downsample", ["blk.0.bn1"]),
        ("blk.0.downsample.backward.wgrad", ["blk.0.bn1.backward"]),
        ("blk.0.conv1.backward.wgrad", ["optimizer:blk.0.downsample.weight"])]
    serial = residual_share(False)
    assert serial.overlap["merged"] == [] and all(step.concurrent_with is None for step in serial.steps)
    launches = [sorted(plan.request.name for step in share.steps for stage in step.stages for plan in stage.launches)
                for share in (residual_share(True), serial)]
    assert launches[0] == launches[1], "the same kernels run, however the stages fall"


@pytest.fixture(scope="module")
def residual_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("overlap")
    runs = {overlap: run_share(residual_share(overlap), directory=folder / str(overlap)) for overlap in (True, False)}
    runs["merged steps serially"] = run_share(serial_share(runs[True].share), directory=folder / "serial")
    return runs


def test_the_merged_block_passes_every_check_in_no_more_cycles(residual_runs):
    summaries = {overlap: residual_runs[overlap].check() for overlap in (True, False)}
    assert summaries[True]["launches_bit_exact"] == summaries[False]["launches_bit_exact"] > 0
    for key in ("write_events", "read_events"):
        assert summaries[True][key] == summaries[False][key]
    busy = {overlap: share_measures(residual_runs[overlap])["rtl_busy_cycles"] for overlap in (True, False)}
    assert busy[True] <= busy[False]
    overlapped = share_measures(residual_runs[True])
    assert overlapped["overlap"]["on"] and len(overlapped["overlap"]["merged"]) == 3
    assert {op["op"]: op["measured_as"] for op in overlapped["ops"]}["blk.0.bn1"] == \
        "first stage with blk.0.downsample"


def test_launches_planned_apart_run_side_by_side_when_they_fit():
    # Two stages' launches, each planned with its scratchpad region from 0.
    (stats,) = plan_launches([Launch("bn_stats", {"rows": 4, "channels": 32})], seed=1)
    (apply,) = plan_launches([Launch("bn_apply", {"rows": 4, "channels": 32})], seed=2, base=0x10_0000)
    assert stats.scratchpad_base == apply.scratchpad_base == 0
    assert launches_fit([stats, apply]) and not launches_fit([stats] * (KERNEL_CONFIG.trigger.filter_entries + 1))
    moved = side_by_side([stats, apply])
    size = -(-stats.launch.scratchpad_bytes // SECTOR) * SECTOR
    assert [plan.scratchpad_base for plan in moved] == [0, size] and size > 0
    assert moved[1].arguments == [int(word) for word in apply.launch.arguments(apply.addresses, size)]
    assert moved[1].arguments != apply.arguments and moved[1].entry == apply.entry


def test_the_report_sets_the_rtl_overlap_beside_the_planned_one(residual_runs, tmp_path):
    overlapped, serial = residual_runs[True], residual_runs["merged steps serially"]
    serial.check()
    assert [step.op for step in serial.share.steps] == [
        "blk.0.downsample", "blk.0.bn1", "blk.0.downsample.backward.wgrad", "blk.0.bn1.backward",
        "blk.0.conv1.backward.wgrad", "optimizer:blk.0.downsample.weight"]
    assert serial_share(residual_runs[False].share) is None
    report = write_report(overlapped, tmp_path, checks=overlapped.check(), serial=serial)
    figures = report["measures"]["overlap"]
    measured = share_measures(overlapped)
    merged = sum(step["rtl_cycles"] for step in measured["steps"] if step["op"] in
                 {step.op for step in serial.share.steps})
    saved = share_measures(serial)["rtl_busy_cycles"] - merged
    assert figures["rtl_saved_cycles"] == saved > 0
    assert figures["rtl_serial_busy_cycles"] == measured["rtl_busy_cycles"] + saved
    planned = figures["host_serial_cycles"] - figures["host_overlapped_cycles"]
    assert planned > 0 and figures["achieved"] == pytest.approx(saved / planned)
    assert json.loads((tmp_path / "report.json").read_text())["measures"]["overlap"]["achieved"] == \
        pytest.approx(figures["achieved"])
    assert "ran as one stage: `blk.0.downsample` with `blk.0.bn1`" in (tmp_path / "report.md").read_text()
    # The kernels' costs take the sweeps the merges took from the serial run, each once.
    taken = merged_sweeps(share_measures(serial))
    assert [(step["op"], [stage["kernels"] for stage in step["stages"]]) for step in taken] == [
        ("blk.0.bn1", [["bn_apply"]]), ("blk.0.bn1.backward", [["bn_bwd_stats"]]),
        ("optimizer:blk.0.downsample.weight", [["sgd_momentum"]])]


def test_a_block_job_runs_its_merged_steps_again_serially(residual_runs, tmp_path, monkeypatch):
    # The fixture's runs stand for the job's own: the job's share with the steps merged,
    # then the serial share of those steps, in a folder of its own.
    asked = []

    def stand_in(share, job, directory):
        asked.append((bool(share.serial_steps), directory))
        run = residual_runs[True] if share.serial_steps else residual_runs["merged steps serially"]
        assert [step.op for step in share.steps] == [step.op for step in run.share.steps]
        return run, run.check()
    monkeypatch.setattr(shard, "_run_checked", stand_in)
    share = residual_runs[True].share
    result = shard.run_block_job(shard.BlockJob(share.setup, 0, HarnessShape(), graph=residual()), tmp_path, share)
    assert result["status"] == "ok", result.get("error")
    assert asked == [(True, tmp_path), (False, tmp_path / "serial")]
    figures = result["measures"]["overlap"]
    assert len(figures["merged"]) == 3 and figures["rtl_saved_cycles"] > 0
    assert figures["rtl_serial_busy_cycles"] == figures["rtl_busy_cycles"] + figures["rtl_saved_cycles"]
    assert [step["op"] for step in result["measures"]["merged_sweeps"]] == [
        "blk.0.bn1", "blk.0.bn1.backward", "optimizer:blk.0.downsample.weight"]
