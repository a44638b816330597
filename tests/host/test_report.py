"""run_gpu's report: the GPU's idle time on the matNDP timeline, the data-parallel
baseline made of one GPU's op times, the expander's optimizer compute spread over its
NDP slices, and the single-GPU options (memory placement, optimizer kept on the GPU)."""

import re

import pytest

from matndp.host.gpu import PRESETS, baseline_timeline
from matndp.host.kernels.library import OPS
from matndp.host.report import RunConfig, run_gpu
from matndp.host.zoo import build_model


@pytest.mark.parametrize("model, policy", [("vgg16_bn", "auto"), ("resnet50", "all")])
def test_gpu_waiting_is_the_idle_time_between_its_kernels(model, policy):
    report, plan = run_gpu(RunConfig(model, "a100", 2, "bf16", policy=policy), with_plan=True)
    busy = sorted((b.start_s, b.end_s) for b in plan.gpu_busy)
    idle, now = 0.0, 0.0
    for start, end in busy:
        idle += max(0.0, start - now)
        now = max(now, end)
    idle += report["matndp_s"] - now
    assert idle > 0
    assert report["gpu_waiting_for_ndp_s"] == pytest.approx(idle, rel=1e-9, abs=1e-15)


def test_the_data_parallel_baseline_is_built_from_one_gpus_op_times():
    gpus = 4
    report = run_gpu(RunConfig("resnet50", "a100", 16, "bf16", gpus=gpus))
    by_phase = {}
    for entry in baseline_timeline(build_model("resnet50", batch=16, dtype="bf16"), PRESETS["a100"]):
        by_phase[entry.phase] = by_phase.get(entry.phase, 0.0) + entry.duration_s
    baseline = report["ndpxnet"]["baseline"]
    assert baseline["gpus"] == gpus
    assert baseline["optimizer_gpu_s"] == pytest.approx(by_phase["optimizer"])
    # Forward and backward passes, the all-reduce's exposed part, then the optimizer step.
    assert baseline["baseline_s"] == pytest.approx(
        by_phase["forward"] + by_phase["backward"] + baseline["allreduce_exposed_s"]
        + by_phase["optimizer"])
    assert report["baseline_s"] == baseline["baseline_s"]


def test_the_expanders_optimizer_compute_divides_over_its_slices():
    def compute_s(slices):
        report = run_gpu(RunConfig("resnet50", "a100", 16, "bf16", gpus=2,
                                   ndp_slices_per_controller=slices))
        return report["ndpxnet"]["expander_optimizer_compute_s"]
    assert compute_s(8) == pytest.approx(2 * compute_s(16))


def test_the_expander_placement_is_reported_and_its_link_energy_charged():
    from matndp.host.energy import EnergyConstants, baseline_energy, matndp_energy
    report, plan = run_gpu(RunConfig("resnet50", "a100", 4, "bf16", placement="expander"),
                           with_plan=True)
    assert report["memory_placement"] == plan.memory.describe()
    assert report["memory_placement"]["name"] == "expander" and report["offload_optimizer"]
    cxl = EnergyConstants().cxl_pj_per_bit * 1e-12
    # every byte a GPU kernel moves crosses the link; the NDP's bytes do not
    assert report["energy_baseline"]["link_j"] == pytest.approx(plan.dram_bytes_baseline * 8 * cxl)
    assert report["energy_matndp"]["link_j"] == pytest.approx(plan.dram_bytes_gpu * 8 * cxl)
    assert report["energy_j_baseline"] == pytest.approx(
        baseline_energy(plan).total_j + plan.dram_bytes_baseline * 8 * cxl)
    assert report["energy_j_matndp"] == pytest.approx(
        matndp_energy(plan).total_j + plan.dram_bytes_gpu * 8 * cxl)


def test_the_local_placement_is_the_default_run():
    default = run_gpu(RunConfig("vgg16_bn", "v100", 2, "fp16"))
    assert default == run_gpu(RunConfig("vgg16_bn", "v100", 2, "fp16", placement="local"))
    assert default["memory_placement"] == {"name": "local"}
    assert default["energy_baseline"]["link_j"] == default["energy_matndp"]["link_j"] == 0


def test_keeping_the_optimizer_on_the_gpu_leaves_its_ops_there():
    report, plan = run_gpu(RunConfig("resnet50", "a100", 4, "bf16", offload_optimizer=False),
                           with_plan=True)
    assert report["breakdown"]["optimizer"]["offloaded_ops"] == 0
    assert all(plan.placements[op.name].reason == "optimizer offload disabled"
               for op in plan.graph.ops if op.kind == "optimizer")


@pytest.mark.parametrize("options, message", [
    ({"placement": "nearby"}, "unknown memory placement 'nearby'; known: local, expander"),
    ({"placement": "expander", "gpus": 2}, "placement 'expander' is for one GPU; with 2 GPUs"),
    ({"offload_optimizer": False, "gpus": 2}, "cannot be kept on the GPUs with 2 GPUs"),
])
def test_single_gpu_options_are_refused_where_they_do_not_apply(options, message):
    with pytest.raises(ValueError, match=message):
        run_gpu(RunConfig("resnet50", "a100", 4, "bf16", **options))


def test_the_data_parallel_runs_dram_traffic_is_k_gpus_and_the_expanders():
    """K GPUs each move their own iteration's bytes; NDPXNet's GPUs skip the optimizer
    step, and the expanders move the reduction's and the step's bytes: K gradient writes,
    K - 1 reads by the last arrival, each optimizer state read and written, the weights
    written once and read back by the K GPUs (docs/ndpxnet-rtl.md)."""
    gpus = 4
    report, plan = run_gpu(RunConfig("resnet50", "a100", 16, "bf16", gpus=gpus), with_plan=True)
    graph = build_model("resnet50", batch=16, dtype="bf16")
    size = {kind: sum(t.bytes for t in graph.tensors.values() if t.kind == kind)
            for kind in ("weight", "weight_gradient", "optimizer_state")}
    expander = (size["weight_gradient"] * (2 * gpus - 1) + 2 * size["optimizer_state"]
                + size["weight"] * (1 + gpus))
    assert [op.name for op in plan.graph.ops] == \
        [op.name for op in graph.ops if op.phase != "optimizer"]
    assert report["dram_bytes_matndp"] == pytest.approx(gpus * plan.dram_bytes_matndp + expander,
                                                        abs=1)
    step = sum(graph.op_bytes(op) for op in graph.ops if op.phase == "optimizer")
    assert report["dram_bytes_baseline"] == gpus * (plan.dram_bytes_baseline + step)


@pytest.mark.parametrize("gpus", [1, 2])
def test_the_report_counts_the_ops_of_each_placement(gpus):
    report, plan = run_gpu(RunConfig("resnet50", "a100", 4, "bf16", policy="all", gpus=gpus),
                           with_plan=True)
    counts = {}
    for op in plan.graph.ops:
        where = plan.placements[op.name].where
        counts[where] = counts.get(where, 0) + 1
    assert report["placements"] == counts and "on_the_fly" in counts


def test_every_energy_part_of_a_data_parallel_run():
    """Two GPUs: each part from its definition, in the documented constants: K times one
    GPU's iteration (its optimizer step added back on the baseline, at FP32 and through
    DRAM), NVLink for the all-reduce, and on the matNDP side the expanders' link, DRAM
    traffic, optimizer instructions and their slices' static power."""
    from matndp.host.energy import baseline_energy, matndp_energy
    from matndp.host.ndpxnet import NDPXNetConfig
    gpus, pj = 2, 1e-12
    dram, transport, nvlink, cxl = 3.97 * pj, (13.11 - 3.97) * pj, 1.3 * pj, 8.0 * pj
    fp32, instruction, slice_w = (0.38 + 1.31) / 2 * pj, (53.8 + 3 * 17.6) * pj, 0.272 / 4
    report, plan = run_gpu(RunConfig("resnet50", "a100", 4, "bf16", gpus=gpus), with_plan=True)
    graph = build_model("resnet50", batch=4, dtype="bf16")
    step = [op for op in graph.ops if op.phase == "optimizer"]
    step_bytes = sum(graph.op_bytes(op) for op in step)
    static_w = PRESETS["a100"].tdp_w * 0.30
    one, ndp = baseline_energy(plan), matndp_energy(plan)
    baseline_s, matndp_s = report["baseline_s"], report["matndp_s"]
    assert report["energy_baseline"] == pytest.approx({
        "gpu_compute_j": gpus * (one.gpu_compute_j + sum(op.flops for op in step) * fp32),
        "ndp_compute_j": 0.0,
        "dram_j": gpus * (one.dram_j + step_bytes * 8 * dram),
        "gpu_transport_j": gpus * (one.gpu_transport_j + step_bytes * 8 * transport),
        "gpu_static_j": gpus * static_w * baseline_s, "ndp_static_j": 0.0,
        "link_j": report["ndpxnet"]["baseline"]["nvlink_bytes"] * 8 * nvlink,
        "total_j": report["energy_j_baseline"]}, rel=1e-9)
    expander_slices = NDPXNetConfig(gpus).expander_channels * 16
    cycles = report["ndpxnet"]["expander_optimizer_compute_s"] * 1.2e9 * expander_slices
    expander_bytes = report["dram_bytes_matndp"] - gpus * plan.dram_bytes_matndp
    assert report["energy_matndp"] == pytest.approx({
        "gpu_compute_j": gpus * ndp.gpu_compute_j,
        "ndp_compute_j": gpus * ndp.ndp_compute_j + cycles * instruction,
        "dram_j": gpus * ndp.dram_j + expander_bytes * 8 * dram,
        "gpu_transport_j": gpus * ndp.gpu_transport_j,
        "gpu_static_j": gpus * static_w * matndp_s,
        "ndp_static_j": (gpus * plan.meta["ndp_slices"] + gpus * expander_slices) * slice_w * matndp_s,
        "link_j": report["ndpxnet"]["matndp"]["expander_link_bytes"] * 8 * cxl,
        "total_j": report["energy_j_matndp"]}, rel=1e-6)
    assert report["energy_j_baseline"] == pytest.approx(
        sum(v for k, v in report["energy_baseline"].items() if k != "total_j"), rel=1e-12)
    assert report["energy_j_matndp"] == pytest.approx(
        sum(v for k, v in report["energy_matndp"].items() if k != "total_j"), rel=1e-12)


def test_the_ndpxnet_timeline_splits_the_matndp_iteration_where_the_forward_pass_ends():
    """NDPXNet overlaps the weights' read-back with the forward pass and the gradients'
    streaming with the backward pass: the matNDP timeline splits at the end of its last
    forward op (well before the iteration ends), and the last backward op's weight
    gradients are the tail that cannot overlap. One memory expander per GPU by default."""
    from matndp.host.ndpxnet import NDPXNetConfig, simulate_ndpxnet
    report, plan = run_gpu(RunConfig("resnet50", "a100", 4, "bf16", gpus=2), with_plan=True)
    graph = build_model("resnet50", batch=4, dtype="bf16")
    forward = {op.name for op in graph.ops if op.phase == "forward"}
    forward_end = max(entry.end_s for entry in plan.schedule if entry.op in forward)
    assert 0 < forward_end < 0.6 * plan.matndp_s
    last = [op for op in graph.ops if op.phase == "backward"][-1]
    tail_bytes = sum(graph.tensor_bytes(t) for t in last.outputs
                     if graph.tensors[t].kind == "weight_gradient")
    expected = simulate_ndpxnet(
        graph, PRESETS["a100"], NDPXNetConfig(2, expanders=2), forward_s=forward_end,
        backward_s=plan.matndp_s - forward_end,
        optimizer_gpu_s=report["ndpxnet"]["baseline"]["optimizer_gpu_s"],
        expander_optimizer_s=report["ndpxnet"]["expander_optimizer_compute_s"],
        last_gradient_bytes=tail_bytes)
    assert report["ndpxnet"]["matndp"] == pytest.approx(expected.as_dict())
    assert report["matndp_s"] == pytest.approx(expected.ndpxnet_s)


@pytest.mark.parametrize("gpus, tail", [(1, ""), (2, " (it is per GPU)")])
def test_a_model_larger_than_the_gpu_is_refused_with_both_sizes(gpus, tail):
    from matndp.host.zoo.summary import footprint_bytes
    need = footprint_bytes(build_model("vgg16_bn", batch=256)) / 1e9
    assert 32 < need                                    # the V100 preset's 32 GB
    with pytest.raises(ValueError, match=re.escape(
            f"vgg16_bn at batch 256 (fp32) needs at least {need:.1f} GB per GPU (weights, "
            f"gradients, optimizer state, activations) but a v100 has 32 GB; lower --batch{tail}")
            + "$"):
        run_gpu(RunConfig("vgg16_bn", "v100", 256, gpus=gpus))


def test_tensors_in_the_expander_are_not_held_to_the_gpus_capacity():
    report = run_gpu(RunConfig("vgg16_bn", "v100", 256, placement="expander"))
    assert report["memory_placement"]["name"] == "expander" and report["batch"] == 256


def test_a_graph_of_ones_own_runs_at_its_own_batch_and_dtype(calibration, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                 # where no calibration file was measured
    graph = build_model("resnet50", batch=2, dtype="bf16")
    report = run_gpu(RunConfig("not-a-zoo-model", "a100", 64, "fp32", policy="all"), graph=graph)
    assert {key: report[key] for key in ("model", "gpu", "batch", "dtype", "seq_len", "gpus",
                                         "policy", "offload_optimizer")} == {
        "model": "resnet50", "gpu": "a100", "batch": 2, "dtype": "bf16", "seq_len": None,
        "gpus": 1, "policy": "all", "offload_optimizer": True}
    assert report["calibration"] == calibration.describe()
    assert report["speedup"] == pytest.approx(report["baseline_s"] / report["matndp_s"])


def test_the_gpus_combines_of_the_slices_partials_are_one_per_offloaded_reduction():
    report, plan = run_gpu(RunConfig("resnet50", "a100", 2, "fp32"), with_plan=True)
    reductions = sum(len([phase for phase in OPS[placement.kernel].phases if phase.endswith("stats")])
                     for placement in plan.placements.values() if placement.offloaded)
    combines = report["partial_combines"]
    assert combines["steps"] == reductions > 0
    # Each a launch (4 µs on an A100) and its bytes; on the path to its consumer.
    assert 4e-6 * reductions < combines["time_s"] < 6e-6 * reductions
    assert combines["matndp_s_with_combines"] == pytest.approx(report["matndp_s"] + combines["time_s"])
