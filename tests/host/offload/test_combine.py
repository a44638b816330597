"""The GPU's combine of the slices' partial reductions: its bytes and time worked out by hand
for a per-channel and a per-row reduction, the steps of a plan, and bad input refused."""

import pytest

from matndp.host.calibration import load_calibration
from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.kernels.library import OPS
from matndp.host.offload import PlannerConfig, plan_offload
from matndp.host.offload.combine import REDUCTIONS, combine_step, combine_steps, combined_iteration_s

from .graphs import GPU


def test_a_batch_norms_combine_worked_out_by_hand():
    # 2 x 16 x 3 x 3: 18 rows of 16 channels; over 10 slices every slice holds rows.
    tensor = Tensor("x", (2, 16, 3, 3), "fp32", "activation")
    step = combine_step("bn", "bn_stats", tensor, 10, 5e-6, 90e9)
    # Read: 16 channels x 10 slices x (mean, invstd) x 4 B; written: 16 x 6 x 4 B.
    assert (step.groups, step.holders, step.read_bytes, step.written_bytes) == (16, 10, 1280, 384)
    assert step.time_s == pytest.approx(5e-6 + 1664 / 90e9, rel=1e-12)
    # Over 64 slices only the 18 that hold a row have a partial.
    assert combine_step("bn", "bn_stats", tensor, 64, 5e-6, 90e9).holders == 18


def test_a_row_reductions_combine_worked_out_by_hand():
    # 4 rows of 100 FP32: 13 sectors a row, each row's partials on 13 slices of 160.
    tensor = Tensor("x", (4, 100), "fp32", "activation")
    step = combine_step("ln", "layernorm_stats", tensor, 160, 0.0, 1e9)
    assert (step.groups, step.holders, step.read_bytes, step.written_bytes) == (4, 13, 416, 288)
    assert step.time_s == pytest.approx(704 / 1e9, rel=1e-12)
    assert combine_step("sm", "softmax_max", Tensor("x", (4, 100), "bf16", "activation"), 160,
                        0.0, 1e9).holders == 7


def _conv_bn():
    tensors = [Tensor("x", (2, 16, 3, 3), "fp32", "input"), Tensor("w", (16, 16), "fp32", "weight"),
               Tensor("y", (2, 16, 3, 3), "fp32", "activation"),
               Tensor("z", (2, 16, 3, 3), "fp32", "activation"),
               Tensor("gamma", (16,), "fp32", "weight"), Tensor("beta", (16,), "fp32", "weight")]
    ops = [Op("conv", "gemm", "forward", 10 ** 6, ("x", "w"), ("y",)),
           Op("bn", "normalization", "forward", 7 * 288, ("y", "gamma", "beta"), ("z",), ("conv",),
              {"ndp_kernel": "batchnorm_fwd"})]
    return IterationGraph("conv_bn", tensors, ops, batch=2, dtype="fp32")


def test_a_plans_combine_steps_follow_its_reductions_and_add_to_its_iteration():
    calibration = load_calibration()
    plan = plan_offload(_conv_bn(), GPU, calibration, PlannerConfig(policy="all"))
    slices = GPU.memory_controllers * calibration.hardware.slices_per_controller
    assert plan.placements["bn"].offloaded and plan.meta["ndp_slices"] == slices
    (step,) = combine_steps(plan)
    assert (step.op, step.phase, step.groups, step.holders) == ("bn", "bn_stats", 16, min(slices, 18))
    assert step.time_s == pytest.approx(5e-6 + (16 * min(slices, 18) * 8 + 16 * 24) / (90e9), rel=1e-12)
    assert combined_iteration_s(plan) == pytest.approx(plan.matndp_s + step.time_s, rel=1e-12)


def test_every_reduction_is_a_phase_of_the_librarys_ops():
    phases = {phase for op in OPS.values() for phase in op.phases}
    for phase, reduction in REDUCTIONS.items():
        assert phase in phases and reduction.groups in ("channels", "rows") and reduction.partial, phase


@pytest.mark.parametrize("arguments, message", [
    (("bn_apply", Tensor("x", (2, 16, 3, 3), "fp32", "activation"), 10, 0.0, 1e9),
     "'bn_apply' is not a reduction with partials"),
    (("bn_stats", Tensor("x", (288,), "fp32", "activation"), 10, 0.0, 1e9),
     r"a per-channel reduction's tensor is N x C x H x W, not \(288,\)"),
    (("bn_stats", Tensor("x", (2, 16, 3, 3), "fp32", "activation"), 0, 0.0, 1e9),
     "slices must be a positive integer, not 0"),
    (("bn_stats", Tensor("x", (2, 16, 3, 3), "fp32", "activation"), 10, 0.0, 0.0),
     "the GPU's bandwidth must be positive, not 0.0"),
])
def test_bad_input_is_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        combine_step("op", *arguments)
