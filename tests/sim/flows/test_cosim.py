"""The co-simulation: a block of a training iteration, as the host model plans it, through
the slice RTL in the batch harness.

The planning tests use a two-layer MLP whose share of every tensor is counted here by
hand; the RTL tests run that MLP's first layer (forward, backward, optimizer) with the
tiering model's stalls, and corrupt the run's results to see the checks fail."""

import copy
import pathlib
import re
import types

import numpy as np
import pytest

from matndp.host.zoo.builder import GraphBuilder
from matndp.sim.batch.check import CheckFailed
from matndp.sim.flows.cosim.iteration import GAP_LIMIT, LAUNCH_BASE, STAGING_BASE, share_iteration, _spread
from matndp.sim.flows.cosim.measure import calibration_document, measure
from matndp.sim.batch.parameters import HarnessShape
from matndp.sim.flows.cosim.share_run import run_share, shape_for
from matndp.sim.flows.cosim.setup import CosimError, CosimSetup
from matndp.host.calibration import load_calibration
from matndp.host.units import format_seconds

from .documented_files import documented_files, written


# The RTL tests run on the batch harness's build, which the engine_slice group makes
# (tests/sim/batch/test_harness.py): the module joins that group, so that its run is made
# once, on the worker that already holds the build and the slice's export.
pytestmark = pytest.mark.xdist_group("engine_slice")


SECTOR = 32
SLICES = 4


def mlp(batch=32):
    builder = GraphBuilder("mlp", batch=batch, dtype="fp32", optimizer="sgd_momentum")
    x = builder.input("x", (batch, 256))
    labels = builder.input("labels", (batch,), "int64")
    hidden = builder.relu("fc1.act", builder.linear("fc1", x, 256))
    logits = builder.linear("fc2", hidden, 16)
    return builder.finish(builder.cross_entropy("loss", logits, labels), {"logits": logits})


def share(policy="ideal", hbm_fraction=0.9, batch=32, **others):
    return share_iteration(CosimSetup(block="fc1", slices=SLICES, policy=policy,
                                      hbm_fraction=hbm_fraction, **others), graph=mlp(batch))


# A configuration that stalls: the MLP at batch 64 needs 0.9 of its footprint for its
# largest op, and tm then waits before two of the block's ops.
STALLING = {"policy": "tm", "hbm_fraction": 0.9, "batch": 64}


# --- set-up errors ----------------------------------------------------------------------------
@pytest.mark.parametrize("fields, message", [
    ({"model": "alexnet"}, "unknown model 'alexnet'"),
    ({"gpu": "b200"}, "unknown GPU preset 'b200'"),
    ({"policy": "fifo"}, "unknown tiering policy 'fifo'"),
    ({"flash": "floppy"}, "unknown flash preset 'floppy'"),
    ({"batch": 0}, "batch must be a positive integer, not 0"),
    ({"batch": True}, "batch must be a positive integer, not True"),
    ({"slices": 0}, "slices must be a positive integer, not 0"),
    ({"seed": -1}, "seed must be a non-negative integer, not -1"),
    ({"slice_index": -1}, "slice_index must be a non-negative integer, not -1"),
    ({"slices": 4, "slice_index": 4}, "slice_index must be below slices (4), not 4"),
    ({"hbm_fraction": 0}, "hbm_fraction must be in (0, 1], not 0"),
    ({"hbm_fraction": 1.5}, "hbm_fraction must be in (0, 1], not 1.5"),
    ({"pressure": 1.0}, "pressure must be in [0, 1), not 1.0"),
    ({"block": ""}, "block must be an op-name prefix"),
])
def test_a_setup_that_cannot_run_is_refused_naming_the_field(fields, message):
    with pytest.raises(CosimError) as error:
        CosimSetup(**fields)
    assert message in str(error.value)


def test_an_unknown_block_and_a_share_that_does_not_fit_are_refused():
    with pytest.raises(CosimError, match="no op of mlp starts with 'fc9'"):
        share_iteration(CosimSetup(block="fc9", slices=SLICES), graph=mlp())
    with pytest.raises(CosimError, match="needs more than 2,097,152 sectors of memory"):
        share_iteration(CosimSetup(block="fc1", slices=1, hbm_fraction=1.0), graph=_wide_mlp())


def _wide_mlp():
    builder = GraphBuilder("wide", batch=64, dtype="fp32", optimizer="sgd_momentum")
    x = builder.input("x", (64, 4096))
    labels = builder.input("labels", (64,), "int64")
    logits = builder.linear("fc1", x, 4096)
    return builder.finish(builder.cross_entropy("loss", logits, labels), {"logits": logits})


# --- planning, counted by hand --------------------------------------------------------------
def test_the_share_of_each_tensor_and_the_steps_follow_the_plan():
    planned = share()
    steps = {step.op: step for step in planned.steps}
    # fc1 forward on the GPU: x (32 x 256 fp32 = 32 KiB) and fc1.weight (256 x 256 = 256 KiB)
    # and fc1.bias (1 KiB) read, fc1.out (32 KiB) written; a quarter of each for one of 4 slices.
    fc1 = steps["fc1"].stages[0]
    assert fc1.kind == "gpu"
    assert int((~fc1.write).sum()) == (32 * 1024 + 256 * 1024 + 1024) // 4 // SECTOR
    assert int(fc1.write.sum()) == 32 * 1024 // 4 // SECTOR
    # relu rides on fc1's writes: its entry watches exactly what fc1 writes, with its data.
    assert steps["fc1"].riders == ["fc1.act"] and "fc1.act" not in steps
    (relu,) = fc1.launches
    assert relu.request.name == "relu_fwd" and relu.write_triggered
    written = fc1.addr[fc1.write]
    assert written.min() == relu.entry["base"] and written.max() == relu.entry["base"] + relu.entry["size"] - SECTOR
    first = int(np.flatnonzero(fc1.write)[0])
    offset = int(fc1.addr[first]) - relu.entry["base"]
    assert bytes(fc1.data[first]) == bytes(relu.trigger_bytes[offset:offset + SECTOR])
    assert relu.launch.expected_triggers == int(fc1.write.sum())
    # A standalone optimizer is a sweep of its gradient's share: 256 x 256 / 4 elements.
    (sweep,) = steps["optimizer:fc1.weight"].stages
    assert sweep.kind == "sweep" and len(sweep) == 256 * 256 // 4 * 4 // SECTOR
    assert set(sweep.source) == {"sweep"} and sweep.gap.max() == 0
    # Requests keep to their areas: the GPU's tensors below the launches' operands.
    assert fc1.addr[~fc1.write].max() < LAUNCH_BASE <= fc1.addr[fc1.write].min()


def test_a_gpu_op_spreads_its_requests_over_its_scheduled_time():
    planned = share()
    for step in planned.steps:
        for stage in step.stages:
            if stage.kind == "gpu":
                # count requests, each after its gap, take count + sum(gap) cycles at the least.
                assert len(stage) + int(stage.gap.sum()) + stage.idle_after == pytest.approx(step.host_cycles, abs=len(stage))
    gaps, idle = _spread(3, 3 * (GAP_LIMIT + 11))
    assert gaps.tolist() == [GAP_LIMIT] * 3 and idle == 3 * 10, "what the gap field cannot hold is kept"


def test_without_tiering_pressure_nothing_stalls_or_moves():
    planned = share("ideal")
    assert all(step.stall_cycles == 0 for step in planned.steps)
    assert not any((stage.source == "migration").any() for step in planned.steps for stage in step.stages)


def test_the_tiering_stalls_and_page_copies_are_the_tiering_models():
    planned = share(**STALLING)
    record = planned.tier.records[-1]
    slot = {op.name: index for index, op in enumerate(planned.graph.ops)}
    def stall(name):
        return round(record.stall_by_boundary[slot[name]] * planned.clock_hz)

    stalled = 0
    stepped = {step.op for step in planned.steps}
    for step in planned.steps:
        # A rider with no step of its own ran during its carrier: its stall is the carrier's.
        expected = stall(step.op) + sum(stall(rider) for rider in step.riders if rider not in stepped)
        assert step.stall_cycles == expected
        stalled += expected
        copies = sum(int((stage.source == "migration").sum()) for stage in step.stages)
        assert copies == sum(step.migrated_sectors.values())
        for stage in step.stages:
            moved = stage.addr[stage.source == "migration"]
            assert np.all(moved >= STAGING_BASE)
    assert stalled == sum(stall(op["op"]) for op in planned.ops), "a stall was dropped"
    assert stalled > 0, "the test needs a configuration that stalls"


def test_an_op_riding_wholly_on_its_producer_keeps_its_page_copies():
    """The bias's optimizer step rides on the weight gradient's writes, so it runs during
    them; tm evicts pages at it all the same (this slice's share: 32 sectors), and they go
    through the slice in the weight gradient's stage, beside its own 704 fetched."""
    planned = share(**STALLING)
    (op,) = [op for op in planned.ops if op["op"] == "optimizer:fc1.bias"]
    assert op["rides_on"] == "fc1.backward.wgrad"
    assert not [step for step in planned.steps if step.op == "optimizer:fc1.bias"]
    (step,) = [step for step in planned.steps if step.op == "fc1.backward.wgrad"]
    assert step.migrated_sectors == {"fetch": 704, "evict": 32}
    (stage,) = step.stages
    assert int((stage.source == "migration").sum()) == 704 + 32
    assert int((stage.write[stage.source == "migration"]).sum()) == 704, "fetches write, evictions read"


# --- through the RTL --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rtl_run(tmp_path_factory):
    planned = share(**STALLING, pressure=0.3)
    return run_share(planned, directory=tmp_path_factory.mktemp("cosim") / "run")


def test_every_kernel_of_the_block_is_bit_exact_and_every_access_checked(rtl_run):
    summary = rtl_run.check()
    launches = sum(len(stage.launches) for step in rtl_run.share.steps for stage in step.stages)
    assert summary["launches_bit_exact"] == launches >= 4
    assert summary["write_events"] + summary["read_events"] == sum(
        plan.launch.expected_triggers for step in rtl_run.share.steps for stage in step.stages
        for plan in stage.launches)
    assert summary["engine_requests"] > 0


def test_the_tiering_stalls_show_in_the_rtl_run(rtl_run):
    measures = measure(rtl_run)
    steps = measures["steps"]
    for before, step in zip(steps, steps[1:]):
        if step["stall_cycles_host"]:
            assert step["stall_cycles"] == step["stall_cycles_host"]
            assert step["first_cycle"] - before["last_cycle"] >= step["stall_cycles_host"]
    assert measures["stall_cycles"] == sum(step.stall_cycles for step in rtl_run.share.steps) > 0
    slots = measures["slots"]
    assert slots["requests"]["migration"] == sum(
        int((stage.source == "migration").sum()) for step in rtl_run.share.steps for stage in step.stages)
    assert sum(slots["requests"].values()) == rtl_run.check()["memory_requests"]
    path = measures["gpu_path"]
    assert path["gpu"]["requests"] + path["sweep"]["requests"] == rtl_run.check()["gpu_requests"]
    assert path["gpu"]["to_memory_cycles"]["min"] >= 1, "the trigger's stage adds a cycle"


def test_a_wrong_output_or_a_missing_event_fails_the_checks(rtl_run):
    broken = copy.copy(rtl_run)
    broken.stages = [dict(stage) for stage in rtl_run.stages]
    index = next(i for i, stage in enumerate(broken.stages) if stage["stage"].launches)
    outputs = [dict(out) for out in broken.stages[index]["outputs"]]
    name = next(iter(outputs[0]))
    outputs[0][name] = outputs[0][name].copy()
    outputs[0][name].view(np.uint32)[0] ^= 1
    broken.stages[index]["outputs"] = outputs
    with pytest.raises(CheckFailed, match="elements differ"):
        broken.check(iss=False)
    # A stage whose window misses its last cycle misses events.
    late = copy.copy(rtl_run)
    late.stages = [dict(stage) for stage in rtl_run.stages]
    late.stages[index]["last_cycle"] = late.stages[index]["first_cycle"] + 1
    with pytest.raises(CheckFailed, match="events"):
        late.check(iss=False)


def test_the_measured_costs_make_a_calibration_the_host_model_loads(rtl_run, tmp_path):
    import json
    measures = measure(rtl_run)
    document = calibration_document(measures, rtl_run.share.clock_hz)
    assert document["kernels"], "the MLP's sweeps measure at least one kernel"
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(document))
    calibration = load_calibration(path)
    for name, entry in document["kernels"].items():
        assert calibration.cost(name).cycles_per_packet == pytest.approx(entry["cycles_per_packet"])
        assert name in calibration.measured_kernels


# --- the whole iteration, block by block -------------------------------------------------------
def test_blocks_cover_every_op_once():
    from matndp.sim.flows.cosim.iteration import block_of, blocks_of
    graph = mlp()
    assert blocks_of(graph) == ["fc1", "fc2", "loss"]
    assert [block_of(name) for name in ("layer1.0.conv1", "optimizer:layer1.0.bn1.weight",
                                        "layer1.1.conv1.backward.dgrad.accumulate:layer1.0.relu3.out",
                                        "features.3.backward", "encoder.layer.5.attention", "conv1")] == \
        ["layer1.0", "layer1.0", "layer1.1", "features.3", "encoder.layer.5", "conv1"]
    from matndp.sim.flows.cosim.iteration import share_blocks
    shares = share_blocks(CosimSetup(slices=SLICES, policy="ideal", hbm_fraction=0.9), graph=graph)
    ops = [op["op"] for share in shares for op in share.ops]
    assert sorted(ops) == sorted(op.name for op in graph.ops)


def _planned_digest(shares):
    """A digest of everything a planned iteration hands the harness: per share its memory
    image, notes, ops and size; per step its figures; per stage every request column and
    each launch's layout, arguments, entry, triggering accesses and placed bytes."""
    import hashlib
    digest = hashlib.sha256()

    def add(value):
        if isinstance(value, np.ndarray) and value.dtype.kind in "OU":
            digest.update(repr(value.tolist()).encode())
        elif isinstance(value, np.ndarray):
            digest.update(f"{value.dtype}{value.shape}".encode())
            digest.update(np.ascontiguousarray(value).tobytes())
        else:
            digest.update(repr(value).encode())
    for share in shares:
        for value in (share.image_sectors, share.notes, share.ops, share.memory_interval, share.slices):
            add(value)
        for addr, data in share.image:
            add(addr)
            add(data)
        for step in share.steps:
            add((step.op, step.where, step.phase, step.host_cycles, step.stall_cycles, step.riders,
                 step.migrated_sectors))
            for stage in step.stages:
                add((stage.kind, stage.label, stage.idle_after))
                for column in (stage.addr, stage.write, stage.data, stage.mask, stage.source, stage.gap):
                    add(column)
                for plan in stage.launches:
                    add((plan.request.name, plan.request.problem, plan.addresses, plan.scratchpad_base,
                         plan.arguments, plan.entry, plan.trigger, plan.read_back))
                    add(plan.trigger_bytes)
                    for name, addr, raw in plan.place:
                        add((name, addr))
                        add(raw)
    return digest.hexdigest()


# The MLP's whole iteration with tiering stalls and page copies, as the planner laid it out
# before its request columns were built with whole-array operations (recorded from that
# planner, run on the kernel library and runtime of this tree: the initializers' and the
# finalizers' µthread counts are part of a launch's entry): the faster planner must lay out
# the same bits. Recorded again for two changes and nothing else (the old bits come back
# with both undone): the bias's optimizer step, riding on the weight gradient, keeps the
# page copies tm makes at it, and a step's migrated sectors are its slice's own count.
# And once more when a rider's stall and page copies moved into its carrier's step (the
# same copies, stalls and requests in all; nine steps fewer in ResNet-50's layer1.0).
PLANNED_MLP_ITERATION = "e36f47280211e3cfc3e3f94ef351f564a92557db6114ef3bd70e46ca886fcd4f"


def test_the_planner_lays_out_the_iteration_it_laid_out_request_by_request():
    from matndp.sim.flows.cosim.iteration import share_blocks
    shares = share_blocks(CosimSetup(slices=SLICES, policy="tm", hbm_fraction=0.9), graph=mlp(64))
    assert _planned_digest(shares) == PLANNED_MLP_ITERATION
    # And each triggering write carries the trigger tensor's bytes at its own offset.
    written = 0
    for share in shares:
        for step in share.steps:
            for stage in step.stages:
                for plan in stage.launches:
                    if not plan.write_triggered:
                        continue
                    base = plan.entry["base"]
                    rows = (stage.addr >= base) & (stage.addr < base + plan.entry["size"])
                    for addr, data in zip(stage.addr[rows], stage.data[rows]):
                        offset = int(addr) - base
                        assert bytes(data) == plan.trigger_bytes[offset:offset + SECTOR].tobytes()
                        written += 1
    assert written > 0


def _harness_input_digest(share):
    """A digest of what the harness is handed for ``share``: the planned share (as
    :func:`_planned_digest`), the job's steps and every stimulus file the job writes."""
    import hashlib
    import pickle
    import tempfile
    from matndp.sim.flows.cosim.share_run import build_job
    job, _, _ = build_job(share)
    digest = hashlib.sha256(_planned_digest([share]).encode())
    digest.update(pickle.dumps(job.steps))
    with tempfile.TemporaryDirectory() as folder:
        job.write(folder)
        for path in sorted(pathlib.Path(folder).glob("*.hex")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


# ResNet-50's layer1.0 at batch 2 (make sim's block: tiering stalls and page copies), as the
# planner and the job's writer laid it out before the planner wrote its columns in place,
# but for slice 0's rows of each activation: the interleave deals its 6,272 rows round-robin
# over the 160 slices, so slice 0 holds 40 of them, where the share used to take
# 6,272 // 160 = 39 (recorded once more with 39 rows, the earlier digest comes back):
# recorded with
#   python -c 'from tests.sim.flows.test_cosim import *; from tests.sim.flows.test_cosim import \
#   _harness_input_digest as d; print(d(share_iteration(CosimSetup(batch=2, block="layer1.0", overlap=False))))'
# (the steps one after another: the layout the planner's changes must keep; the merge of
# concurrent steps is tests/sim/flows/test_cosim_overlap.py's).
# Recorded again for the two changes the MLP's digest above names (the old digest comes back
# with both undone): nine of the block's ops that ride on their producers keep tm's page
# copies (494 fetched sectors at relu2's backward step), and migrated sectors are the slice's;
# and once more for the riders' stalls and copies in their carriers' steps (as the MLP's).
PLANNED_RESNET50_BLOCK = "1326e811734d40b7019e7d960f309d147c15ce0f54f30b935ba327370976c692"


def test_the_planner_hands_the_harness_the_resnet_block_it_handed_it_before():
    share = share_iteration(CosimSetup(batch=2, block="layer1.0", overlap=False))
    assert _harness_input_digest(share) == PLANNED_RESNET50_BLOCK


def test_make_sim_cosim_writes_its_report_and_figures_or_nothing(rtl_run, tmp_path, monkeypatch):
    import json
    from matndp.sim.flows.cosim import run as cosim_run
    output = tmp_path / "cosim"
    # The module's run stands for the run's own (the same share, already run).
    monkeypatch.setattr(cosim_run, "run_share", lambda share, **options: rtl_run)
    report = cosim_run.run_cosim(output, share=rtl_run.share, window=None, progress=lambda line: None)
    # What docs/cosim.md lists, but for the waveform's files and the runs' folders (the run
    # stands in for its own here; tests/sim/flows/test_waveforms_in_gtkwave.py writes a window;
    # the MLP's layer has no steps to merge, so no serial run).
    assert written(output) == documented_files("cosim.md", "Co-simulation") - \
        {"window.fst", "window.gtkw", "run/", "window_run/", "slices/", "serial_run/"}
    assert json.loads((output / "report.json").read_text())["measures"]["cycles"] == report["measures"]["cycles"]
    text = (output / "report.md").read_text()
    for heading in ("## Per op: RTL against the host model", "## Memory slots", "## Tiers", "## Calibration"):
        assert heading in text
    # The host model's iteration (every tensor in HBM) and the tiering run's are reconciled:
    # the tiering run is the baseline's ops plus the flash stalls, and matNDP's ops with
    # the same stalls are what the report gives as the tiered iteration with matNDP.
    tier, retimed = report["tier"], report["retimed"]
    share = rtl_run.share
    assert tier["stall_s"] == share.tier.metrics["stall_s"] > 0
    assert tier["compute_s"] == pytest.approx(share.tier.metrics["compute_s"])
    assert tier["iteration_s"] == pytest.approx(tier["compute_s"] + tier["stall_s"])
    assert tier["iteration_s_matndp"] == pytest.approx(tier["stall_s"] + retimed["iteration_s_retimed"])
    assert "they leave the flash tier out" in text
    assert f"the tiered iteration takes {format_seconds(tier['iteration_s_matndp'])}, " \
           f"{tier['iteration_s'] / tier['iteration_s_matndp']:.3f}× faster" in text
    # A run that fails leaves the folder as it was.
    (output / "mine.txt").write_text("kept")

    def failing(*args, **kwargs):
        raise CheckFailed("injected")
    monkeypatch.setattr(cosim_run, "run_share", failing)
    with pytest.raises(CheckFailed):
        cosim_run.run_cosim(output, share=rtl_run.share, window=None, progress=lambda line: None)
    assert (output / "mine.txt").read_text() == "kept"
    assert not (tmp_path / "cosim.partial").exists()


def _share_with_regions(count, region_bytes=SECTOR):
    """A stand-in for a share: ``count`` regions of ``region_bytes``, none touching another."""
    image = [(index * 4 * region_bytes, np.zeros(region_bytes, dtype=np.uint8)) for index in range(count)]
    return types.SimpleNamespace(image=image)


def test_the_harness_grows_its_region_map_for_an_image_of_more_regions():
    default = HarnessShape()
    assert shape_for([_share_with_regions(default.regions)]) == default
    grown = shape_for([_share_with_regions(4), _share_with_regions(default.regions + 1)])
    assert grown == HarnessShape(regions=2 * default.regions)


def test_a_larger_share_is_no_other_build():
    """The memory is sized by each job's image load: a share of more sectors than the
    2 MiB a build used to hold keeps the default build."""
    assert shape_for([_share_with_regions(4), _share_with_regions(4, region_bytes=1 << 20)]) == HarnessShape()


def test_the_windows_build_traces_every_signal_its_save_file_shows(tmp_path):
    """The traced build records only chosen scopes, and the build sees a payload field
    (``port.field``) as a scope of its own: each trace of the save file must sit in one."""
    from matndp.sim.flows.cosim.waveform import TRACE_SCOPES, save_window
    text = save_window(tmp_path / "window.gtkw", tmp_path, (0, 10_000), [5_000]).read_text()
    traces = [re.sub(r"\[\d+:\d+\]$", "", line) for line in text.splitlines()
              if line.startswith("slice_harness.")]
    assert traces and [trace for trace in traces if trace.rsplit(".", 1)[0] not in TRACE_SCOPES] == []
    assert any(trace.endswith("engine.events__payload.entry") for trace in traces)
