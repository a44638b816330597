"""run_gpu's report: the GPU's idle time on the matNDP timeline, the data-parallel
baseline made of one GPU's op times, and the expander's optimizer compute spread over its
NDP slices."""

import pytest

from matndp.host.gpu import PRESETS, baseline_timeline
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
