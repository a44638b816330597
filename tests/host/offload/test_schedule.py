"""The overlapped schedule (host/offload/schedule.py) on hand-made graphs: what each queue
waits for, how the two share DRAM bandwidth and NDP compute, and whose bytes are whose.

The round GPU of :mod:`.graphs`: a 4 GFLOP GEMM takes 5 + 800 us and is compute-bound;
GPU kernels and NDP work together draw at most 90 GB/s; the NDP is 16 slices at 1 GHz, so
an N-element FP32 tensor is 125 000 packets and ``c`` cycles a packet take
125 000 c / 16 GHz. The schedule's rules, from its definition: the GPU runs its kernels in
graph order, the NDP its standalone work in graph order; an item starts when everything it
waits for has finished, and a GPU kernel waits also for what the NDP kernels riding on it
wait for, a standalone NDP item for what every kernel fused into it waits for; NDP work
gets the DRAM bandwidth the GPU leaves and the NDP compute its riders leave.
"""

import pytest

from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.offload import (GpuCarrier, NdpCarrier, OffloadCosts, OnGpu, OnTheFly,
                                 PlannerConfig, Standalone, memory_placement, plan_offload)
from matndp.host.offload.schedule import run_queues

from .graphs import GPU, N, calibration_of


GEMM_S = 5e-6 + 800e-6           # 4 GFLOP at 5 TFLOPS, plus the launch
USABLE_BPS = 90e9
MB4 = 4 * N                      # one FP32 tensor of N elements
PACKETS = N // 8


def _gemm(name, inputs, outputs, deps=()):
    return Op(name, "gemm", "forward", 4 * 10 ** 9, inputs, outputs, deps)


def _ndp(name, kind, inputs, outputs, deps, kernel):
    return Op(name, kind, "forward", N, inputs, outputs, deps, {"ndp_kernel": kernel})


def _graph(name, tensor_ids, ops):
    tensors = [Tensor(t, (N,), "fp32", "input" if t == "x" else "weight" if t == "w"
                      else "activation") for t in tensor_ids]
    return IterationGraph(name, tensors, ops, batch=1, dtype="fp32")


def _entries(plan):
    return {entry.op: entry for entry in plan.schedule}


def test_a_gpu_kernel_waits_for_what_the_ndp_kernel_riding_on_it_waits_for():
    """scale (no producer: standalone NDP) writes a; mm writes y; sum = a + y rides on mm's
    writes of y, so mm cannot start before scale has written a. mm2 needs nothing, but the
    GPU runs its kernels in graph order: it follows mm."""
    graph = _graph("rider-waits", ["x", "w", "a", "y", "s", "o"], [
        _ndp("scale", "elementwise", ("x",), ("a",), (), "scale_fwd"),
        _gemm("mm", ("w",), ("y",)),
        _ndp("sum", "elementwise", ("a", "y"), ("s",), ("scale", "mm"), "add"),
        _gemm("mm2", ("w",), ("o",))])
    plan = plan_offload(graph, GPU, calibration_of({"scale_fwd": (8,), "add": (9,)}),
                        PlannerConfig("all"))
    assert plan.placements["scale"].where == "ndp"
    assert (plan.placements["sum"].where, plan.placements["sum"].producer) == ("on_the_fly", "mm")
    entry = _entries(plan)
    # scale alone: 8 MB at 90 GB/s (89 us) outlasts its 62.5 us of compute
    scale_s = 2 * MB4 / USABLE_BPS
    assert (entry["scale"].start_s, entry["scale"].end_s) == (0.0, pytest.approx(scale_s))
    # the sum (reads a, writes s: 8 MB with mm's 8 MB, 70 us of compute) does not stretch mm
    assert entry["mm"].start_s == entry["sum"].start_s == pytest.approx(scale_s)
    assert entry["mm"].end_s == entry["sum"].end_s == pytest.approx(scale_s + GEMM_S)
    assert entry["mm2"].start_s == pytest.approx(scale_s + GEMM_S)
    assert plan.matndp_s == pytest.approx(scale_s + 2 * GEMM_S)
    assert [busy.op for busy in plan.gpu_busy] == ["mm", "mm2"]
    assert [busy.op for busy in plan.ndp_busy] == ["scale"]
    # the GPU's bytes are its kernels' own; the NDP's, scale's and the rider's
    assert (plan.dram_bytes_gpu, plan.dram_bytes_ndp) == (4 * MB4, 4 * MB4)
    assert {name: entry[name].dram_bytes for name in entry} == \
        {"scale": 2 * MB4, "mm": 2 * MB4, "sum": 2 * MB4, "mm2": 2 * MB4}


def test_standalone_ndp_work_waits_for_what_a_kernel_fused_into_it_waits_for():
    """scale (standalone NDP) writes a; add = a + g joins scale's NDP work (a is still in
    the NDP's registers) but also needs g, which the GEMM writes: the whole NDP item waits
    for the GEMM. a is read by nothing else, so it is never written."""
    graph = _graph("fused-waits", ["x", "w", "g", "a", "r", "o"], [
        _gemm("mm", ("w",), ("g",)),
        _ndp("scale", "elementwise", ("x",), ("a",), (), "scale_fwd"),
        _ndp("add", "elementwise", ("a", "g"), ("r",), ("scale", "mm"), "add"),
        _gemm("mm2", ("r", "w"), ("o",), ("add",))])
    plan = plan_offload(graph, GPU, calibration_of({"scale_fwd": (4,), "add": (4,)}),
                        PlannerConfig("all"))
    assert plan.placements["scale"].carrier == plan.placements["add"].carrier == NdpCarrier("scale")
    entry = _entries(plan)
    # the NDP item reads x and g and writes r: 12 MB at 90 GB/s (133 us; compute 62.5 us)
    item_s = 3 * MB4 / USABLE_BPS
    assert entry["scale"].start_s == entry["add"].start_s == pytest.approx(GEMM_S)
    assert entry["scale"].end_s == entry["add"].end_s == pytest.approx(GEMM_S + item_s)
    assert entry["mm2"].start_s == pytest.approx(GEMM_S + item_s)
    assert plan.matndp_s == pytest.approx(2 * GEMM_S + item_s)
    assert [(busy.op, busy.start_s) for busy in plan.ndp_busy] == [("scale", pytest.approx(GEMM_S))]
    # scale: x read, a never written; add: g read, r written; the GEMMs: 8 and 12 MB
    assert (entry["scale"].dram_bytes, entry["add"].dram_bytes) == (MB4, 2 * MB4)
    assert (plan.dram_bytes_ndp, plan.dram_bytes_gpu) == (3 * MB4, 5 * MB4)


def test_standalone_work_gets_the_ndp_compute_the_gpu_kernels_riders_leave():
    """relu rides on mm's writes and keeps the NDP's slices busy half of mm's 805 us
    (125 000 packets x 51.52 cycles / 16 GHz = 402.5 us); the standalone scale, 100 us of
    compute alone, gets the other half while mm runs: 200 us."""
    graph = _graph("compute-share", ["x", "w", "y", "a", "z", "o"], [
        _ndp("scale", "elementwise", ("x",), ("a",), (), "scale_fwd"),
        _gemm("mm", ("w",), ("y",)),
        _ndp("relu", "elementwise", ("y",), ("z",), ("mm",), "relu_fwd"),
        _gemm("mm2", ("z", "a"), ("o",), ("relu", "scale"))])
    cycles = {"scale_fwd": (100e-6 * 16e9 / PACKETS,), "relu_fwd": (402.5e-6 * 16e9 / PACKETS,)}
    plan = plan_offload(graph, GPU, calibration_of(cycles), PlannerConfig("all"))
    assert plan.placements["relu"].where == "on_the_fly"
    assert plan.placements["scale"].where == "ndp"
    entry = _entries(plan)
    assert entry["mm"].end_s == pytest.approx(GEMM_S)                # relu does not stretch it
    assert entry["scale"].end_s == pytest.approx(200e-6)
    # its 8 MB over those 200 us: 40 GB/s, beside mm's 12 MB (its own 8, relu's write of z)
    # over 805 us
    first = plan.bandwidth[0]
    assert (first.start_s, first.end_s) == (0.0, pytest.approx(200e-6))
    assert first.ndp_bps == pytest.approx(2 * MB4 / 200e-6)
    assert first.gpu_bps == pytest.approx(3 * MB4 / GEMM_S)
    assert plan.matndp_s == pytest.approx(2 * GEMM_S)


def test_standalone_work_gets_the_bandwidth_a_memory_bound_gpu_kernel_leaves():
    """A GPU element-wise kernel without an NDP kernel moves 8 MB in 105 us; the standalone
    scale (8 MB, 62.5 us of compute) takes what is left of the 90 GB/s beside it and all of
    it afterwards, so the DRAM never idles: scale ends when all 16 MB have moved."""
    graph = _graph("bandwidth-share", ["x", "w", "y", "a", "o"], [
        _ndp("scale", "elementwise", ("x",), ("a",), (), "scale_fwd"),
        Op("copy", "elementwise", "forward", N, ("w",), ("y",)),
        _gemm("mm", ("y", "a"), ("o",), ("copy", "scale"))])
    plan = plan_offload(graph, GPU, calibration_of({"scale_fwd": (8,)}), PlannerConfig("all"))
    assert plan.placements["copy"].where == "gpu" and plan.placements["scale"].where == "ndp"
    entry = _entries(plan)
    copy_s = 5e-6 + 2 * MB4 / 80e9                   # element-wise: 80 % of 100 GB/s
    assert entry["copy"].end_s == pytest.approx(copy_s)
    assert entry["scale"].end_s == pytest.approx(4 * MB4 / USABLE_BPS)
    first = plan.bandwidth[0]
    assert first.end_s == pytest.approx(copy_s)
    assert first.gpu_bps + first.ndp_bps == pytest.approx(USABLE_BPS)
    assert plan.matndp_s == pytest.approx(4 * MB4 / USABLE_BPS + GEMM_S)


def test_a_gpu_kernel_waits_for_its_own_dependencies_as_well_as_its_riders():
    """scale (standalone NDP) writes a; mm reads a, so waits for scale; relu rides on mm's
    writes and waits only for mm: mm still starts when scale has finished (8 MB at
    90 GB/s)."""
    graph = _graph("own-waits", ["x", "w", "a", "y", "z"], [
        _ndp("scale", "elementwise", ("x",), ("a",), (), "scale_fwd"),
        _gemm("mm", ("w", "a"), ("y",), ("scale",)),
        _ndp("relu", "elementwise", ("y",), ("z",), ("mm",), "relu_fwd")])
    plan = plan_offload(graph, GPU, calibration_of({"scale_fwd": (8,), "relu_fwd": (10,)}),
                        PlannerConfig("all"))
    assert plan.placements["relu"].where == "on_the_fly"
    entry = _entries(plan)
    scale_s = 2 * MB4 / USABLE_BPS
    assert entry["mm"].start_s == entry["relu"].start_s == pytest.approx(scale_s)
    assert entry["mm"].end_s == pytest.approx(scale_s + GEMM_S)


def test_standalone_ndp_work_waits_for_what_its_first_kernel_waits_for():
    """scale reads only x, but is ordered after the GEMM; relu joins scale's NDP work and
    waits only for scale: the work still starts when the GEMM has finished."""
    graph = _graph("first-waits", ["x", "w", "g", "a", "r"], [
        _gemm("mm", ("w",), ("g",)),
        _ndp("scale", "elementwise", ("x",), ("a",), ("mm",), "scale_fwd"),
        _ndp("relu", "elementwise", ("a",), ("r",), ("scale",), "relu_fwd")])
    plan = plan_offload(graph, GPU, calibration_of({"scale_fwd": (4,), "relu_fwd": (4,)}),
                        PlannerConfig("all"))
    assert plan.placements["relu"].carrier == plan.placements["scale"].carrier == NdpCarrier("scale")
    entry = _entries(plan)
    assert entry["scale"].start_s == entry["relu"].start_s == pytest.approx(GEMM_S)
    # x read, r written: 8 MB at 90 GB/s (compute 62.5 us)
    assert entry["relu"].end_s == pytest.approx(GEMM_S + 2 * MB4 / USABLE_BPS)


def _costs_of(graph, cycles):
    memory = memory_placement("local", GPU)
    return memory, OffloadCosts(graph, GPU, calibration_of(cycles), memory)


def test_queues_waiting_on_each_other_are_a_planner_bug_named_by_the_gpu_kernel_waiting():
    """Placements the planner never makes: relu rides on mm but waits for scale, standalone
    NDP work that waits for mm. Neither queue can start."""
    graph = _graph("deadlock", ["x", "w", "y", "a", "z"], [
        _gemm("mm", ("w",), ("y",)),
        _ndp("scale", "elementwise", ("x",), ("a",), ("mm",), "scale_fwd"),
        _ndp("relu", "elementwise", ("y",), ("z",), ("mm", "scale"), "relu_fwd")])
    placements = {
        "mm": OnGpu(op="mm"),
        "scale": Standalone(op="scale", kernel="scale_fwd", carrier=NdpCarrier("scale")),
        "relu": OnTheFly(op="relu", kernel="relu_fwd", trigger="y", producer="mm",
                         carrier=GpuCarrier("mm"))}
    memory, costs = _costs_of(graph, {"scale_fwd": (8,), "relu_fwd": (10,)})
    with pytest.raises(RuntimeError) as caught:
        run_queues(graph, memory, placements, costs)
    assert str(caught.value) == "schedule deadlock at 'mm'"


def test_queues_waiting_on_each_other_are_named_by_the_ndp_work_when_the_gpu_is_done():
    """first's NDP work includes late, which waits for second, queued behind it."""
    graph = _graph("ndp-deadlock", ["x", "a", "b", "c"], [
        _ndp("first", "elementwise", ("x",), ("a",), (), "scale_fwd"),
        _ndp("second", "elementwise", ("x",), ("b",), (), "scale_fwd"),
        _ndp("late", "elementwise", ("a", "b"), ("c",), ("first", "second"), "add")])
    placements = {
        "first": Standalone(op="first", kernel="scale_fwd", carrier=NdpCarrier("first")),
        "second": Standalone(op="second", kernel="scale_fwd", carrier=NdpCarrier("second")),
        "late": Standalone(op="late", kernel="add", trigger="a", carrier=NdpCarrier("first"))}
    memory, costs = _costs_of(graph, {"scale_fwd": (8,), "add": (9,)})
    with pytest.raises(RuntimeError) as caught:
        run_queues(graph, memory, placements, costs)
    assert str(caught.value) == "schedule deadlock at 'first'"
