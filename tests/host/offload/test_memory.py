"""Memory placements: the tensors and the NDP beside the GPU's own DRAM (local) or in a
memory expander behind its off-chip link (expander). Times worked out by hand on the round
GPU of :mod:`.graphs`: a 64 GB/s link per direction at 80 % (51.2 GB/s achieved), an
expander of 307.2 GB/s (276.48 GB/s usable) over 8 controllers."""

import dataclasses

import pytest

from matndp.host.gpu import op_time_s
from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.ndpxnet import NDPXNetConfig
from matndp.host.offload import (MEMORY_PLACEMENTS, ExpanderMemory, LocalMemory, PlannerConfig,
                                 memory_placement, plan_offload)

from .graphs import GPU, HARDWARE, N, calibration_of, chain


LAUNCH = 5e-6
LINK_BPS = 64e9 * 0.8                  # one direction, achieved
EXPANDER_USABLE_BPS = 307.2e9 * 0.9
# The round GPU's element-wise and GEMM kernels reach 0.8 of the 0.9 achievable locally:
# over the link they reach the same fraction of its achieved bandwidth.
KIND_FRACTION = 0.8 / 0.9
MB4 = 4 * N                            # one FP32 activation


def test_the_placements_are_registered_by_name_local_first():
    assert MEMORY_PLACEMENTS.names == ("local", "expander")
    assert MEMORY_PLACEMENTS["local"] is LocalMemory
    assert MEMORY_PLACEMENTS["expander"] is ExpanderMemory
    assert PlannerConfig().placement == "local"


@pytest.mark.parametrize("make", [lambda: PlannerConfig(placement="nearby"),
                                  lambda: memory_placement("nearby", GPU)])
def test_an_unknown_placement_is_refused_with_the_valid_names(make):
    with pytest.raises(ValueError, match="unknown memory placement 'nearby'; known: local, expander"):
        make()


def test_a_memory_placement_of_another_gpu_is_refused():
    other = ExpanderMemory(dataclasses.replace(GPU, name="other"))
    with pytest.raises(ValueError, match="memory placement is of GPU 'other', not of 'round'"):
        plan_offload(chain(), GPU, calibration_of({"relu_fwd": (10,)}), memory=other)


def test_the_expander_takes_the_ndpxnet_link_and_memory():
    expander = ExpanderMemory(GPU)
    assert expander.expander == NDPXNetConfig(gpus=1)
    assert expander.link_bps == pytest.approx(LINK_BPS)
    assert expander.usable_bps == pytest.approx(EXPANDER_USABLE_BPS)
    assert expander.ndp_controllers == 8
    assert expander.describe() == {"name": "expander", "link_gbs": 64.0, "link_efficiency": 0.8,
                                   "expander_memory_gbs": 307.2, "expander_channels": 8}


def test_the_local_placement_is_the_gpus_own_memory():
    local = LocalMemory(GPU)
    graph = chain()
    for op in graph.ops:
        assert local.op_time_s(graph, op) == op_time_s(graph, op, GPU)
    assert local.usable_bps == GPU.usable_bandwidth_bps
    assert local.ndp_controllers == GPU.memory_controllers
    assert local.link_bytes(10**9) == 0


def _one_op(inputs, outputs=1, flops=N, kind="elementwise", duration_s=None):
    tensors = [Tensor(f"in{i}", (N,), "fp32", "input") for i in range(inputs)]
    tensors += [Tensor(f"out{i}", (N,), "fp32", "activation") for i in range(outputs)]
    op = Op("op", kind, "forward", flops, tuple(t.id for t in tensors[:inputs]),
            tuple(t.id for t in tensors[inputs:]), (), {"ndp_kernel": "relu_fwd"},
            duration_s=duration_s)
    return IterationGraph("one", tensors, [op], batch=1, dtype="fp32"), op


def test_a_gpu_kernels_bytes_cross_the_link_each_direction_at_its_bandwidth():
    expander = ExpanderMemory(GPU)
    graph, op = _one_op(inputs=1)           # 4 MB read, 4 MB written: both directions at once
    assert expander.op_time_s(graph, op) == pytest.approx(LAUNCH + MB4 / (LINK_BPS * KIND_FRACTION))
    graph, op = _one_op(inputs=2)           # 8 MB read, 4 MB written: the reads set the time
    assert expander.op_time_s(graph, op) == pytest.approx(
        LAUNCH + 2 * MB4 / (LINK_BPS * KIND_FRACTION))
    assert expander.is_memory_bound(graph, op)


def test_a_kernel_that_writes_more_than_it_reads_is_timed_by_its_writes():
    graph, op = _one_op(inputs=1, outputs=3)    # 4 MB read, 12 MB written
    expander = ExpanderMemory(GPU)
    assert expander.memory_time_s(graph, op) == pytest.approx(3 * MB4 / (LINK_BPS * KIND_FRACTION))


@pytest.mark.parametrize("kind, fraction", [
    ("normalization", 0.5),          # the round GPU's normalization kernels reach 50 %
    ("reduction", 0.5),              # a kind it names no figure for: its default, 50 %
])
def test_each_kernel_kind_keeps_its_share_of_the_bandwidth_behind_the_link(kind, fraction):
    graph, op = _one_op(inputs=2, kind=kind)    # 8 MB read, 4 MB written
    assert ExpanderMemory(GPU).memory_time_s(graph, op) == pytest.approx(
        2 * MB4 / (LINK_BPS * fraction / 0.9))
    fast = ExpanderMemory(GPU, NDPXNetConfig(gpus=1, link_gbs=10_000.0))
    assert fast.memory_time_s(graph, op) == pytest.approx(3 * MB4 / (307.2e9 * fraction))


def test_behind_a_fast_link_the_expanders_dram_bounds_the_kernel():
    expander = ExpanderMemory(GPU, NDPXNetConfig(gpus=1, link_gbs=10_000.0))
    graph, op = _one_op(inputs=2)           # 12 MB through the expander's DRAM
    assert expander.op_time_s(graph, op) == pytest.approx(LAUNCH + 3 * MB4 / (307.2e9 * 0.8))


def test_a_compute_bound_kernel_keeps_its_compute_time():
    graph, op = _one_op(inputs=1, flops=4 * 10**9, kind="gemm")
    expander = ExpanderMemory(GPU)
    assert expander.op_time_s(graph, op) == pytest.approx(LAUNCH + 4e9 / (10e12 * 0.5))
    assert not expander.is_memory_bound(graph, op)


def test_a_measured_duration_cannot_be_repriced_behind_the_link():
    graph, op = _one_op(inputs=1, duration_s=1e-3)
    with pytest.raises(ValueError, match="op 'op' carries a measured duration"):
        ExpanderMemory(GPU).op_time_s(graph, op)


def test_an_offloaded_ops_bytes_leave_the_link():
    """mm1 (compute-bound) writes y; the ReLU rides on those writes in the expander and
    writes z there; mm2 reads z. The baseline runs the ReLU over the link; with NDP only
    the two GEMMs' bytes cross it, and the ReLU hides under mm1."""
    graph = chain()
    calibration = calibration_of({"relu_fwd": (10,)})
    plan = plan_offload(graph, GPU, calibration, PlannerConfig(placement="expander"))
    gemm_s = LAUNCH + 4e9 / (10e12 * 0.5)                       # 805 us, compute-bound
    relu_s = LAUNCH + MB4 / (LINK_BPS * KIND_FRACTION)          # 4 MB each way
    assert [e.duration_s for e in plan.baseline] == pytest.approx([gemm_s, relu_s, gemm_s])
    assert plan.placements["middle"].where == "on_the_fly"
    assert plan.matndp_s == pytest.approx(2 * gemm_s)
    ops = {op.name: op for op in graph.ops}
    assert plan.dram_bytes_gpu == graph.op_bytes(ops["mm1"]) + graph.op_bytes(ops["mm2"])
    assert plan.memory.link_bytes(plan.dram_bytes_gpu) == 6 * MB4
    assert plan.dram_bytes_ndp == MB4                           # z, written in the expander
    # the expander's NDP: 8 controllers x 4 slices
    assert plan.meta["ndp_slices"] == 8 * HARDWARE.slices_per_controller


@pytest.mark.parametrize("cycles, expected_s", [
    # bandwidth-bound: 8 MB at the expander's usable bandwidth, not over the link
    (2, 2 * MB4 / EXPANDER_USABLE_BPS),
    # compute-bound: 125 000 packets x 10 cycles on 32 slices at 1 GHz, plus 500 fixed
    (10, N / 8 * 10 / 32e9 + 500e-9),
])
def test_standalone_ndp_work_runs_at_the_expanders_dram(cycles, expected_s):
    graph, _ = _one_op(inputs=1)            # its input is written by no op: standalone
    plan = plan_offload(graph, GPU, calibration_of({"relu_fwd": (cycles, 0, 500)}),
                        PlannerConfig(placement="expander"))
    assert plan.placements["op"].where == "ndp"
    assert plan.baseline_s == pytest.approx(LAUNCH + MB4 / (LINK_BPS * KIND_FRACTION))
    assert plan.matndp_s == pytest.approx(expected_s)
    assert plan.dram_bytes_gpu == 0


def test_a_two_phase_kernels_apply_pass_runs_in_the_expander_off_the_link():
    """Layer-norm rides on mm1's writes of y (statistics: 125 000 packets x 10 cycles on 32
    slices, 39 us, under mm1's 805 us), then re-reads y and writes z inside the expander:
    8 MB at 276.48 GB/s (29 us; its 2-cycle packets take 8 us). Only the GEMMs' 24 MB
    cross the link; the baseline's layer-norm crosses it too."""
    graph = chain("normalization", "layernorm_fwd")
    plan = plan_offload(graph, GPU, calibration_of({"layernorm_fwd": (10, 2)}),
                        PlannerConfig("all", placement="expander"))
    assert plan.placements["middle"].where == "on_the_fly"
    gemm_s = LAUNCH + 4e9 / (10e12 * 0.5)
    apply_s = 2 * MB4 / EXPANDER_USABLE_BPS
    entry = {e.op: e for e in plan.schedule}
    assert entry["middle"].end_s == pytest.approx(gemm_s + apply_s)
    assert entry["mm2"].start_s == pytest.approx(gemm_s + apply_s)
    assert plan.matndp_s == pytest.approx(2 * gemm_s + apply_s)
    assert (plan.dram_bytes_gpu, plan.dram_bytes_ndp) == (6 * MB4, 2 * MB4)
    assert entry["middle"].dram_bytes == 2 * MB4
    assert plan.memory.link_bytes(plan.dram_bytes_gpu) == 6 * MB4
    assert plan.memory.link_bytes(plan.dram_bytes_baseline) == 8 * MB4


def test_the_schedule_shares_the_expanders_dram_not_the_gpus():
    graph = chain("normalization", "batchnorm_fwd")
    plan = plan_offload(graph, GPU, calibration_of({"batchnorm_fwd": (14, 12, 300)}),
                        PlannerConfig("all", placement="expander"))
    assert any(segment.ndp_bps > GPU.usable_bandwidth_bps for segment in plan.bandwidth)
    for segment in plan.bandwidth:
        assert segment.gpu_bps + segment.ndp_bps <= EXPANDER_USABLE_BPS * (1 + 1e-9)
        assert segment.gpu_bps <= 2 * LINK_BPS * (1 + 1e-9)    # both directions at most


def test_the_local_placement_is_the_default_plan():
    graph = chain()
    calibration = calibration_of({"relu_fwd": (10,)})
    default = plan_offload(graph, GPU, calibration)
    local = plan_offload(graph, GPU, calibration, PlannerConfig(placement="local"))
    assert local.schedule == default.schedule and local.bandwidth == default.bandwidth
    assert [e.duration_s for e in local.baseline] == \
        pytest.approx([op_time_s(graph, op, GPU) for op in graph.ops], rel=1e-12)
    assert local.memory == LocalMemory(GPU) and local.meta["ndp_slices"] == 16
