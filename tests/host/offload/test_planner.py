"""NDP offload planning: dependencies, shared bandwidth, the Amdahl bound, placements on
hand-made graphs."""

import json
from math import prod

import pytest

from matndp.host.calibration import DEFAULT_KERNELS, SCHEMA, load_calibration
from matndp.host.gpu import PRESETS, op_time_s
from matndp.host.graph import DTYPE_BYTES, IterationGraph, Op, Tensor
from matndp.host.offload import NdpCarrier, PlannerConfig, plan_offload
from matndp.host.zoo import MODEL_NAMES, build_model

from .graphs import GPU, N, calibration_of as _calibration, chain as _chain


def _small(name, dtype):
    return build_model(name, batch=4, dtype=dtype,
                       seq_len=64 if name in ("bert-base", "gpt2") else None)


CASES = [(m, g, d) for m in MODEL_NAMES for g in PRESETS for d in ("fp32", "bf16")]


@pytest.fixture(scope="module")
def plans(calibration):
    graphs = {(m, d): _small(m, d) for m in MODEL_NAMES for d in ("fp32", "bf16")}
    return {(m, g, d): plan_offload(graphs[m, d], PRESETS[g], calibration)
            for m, g, d in CASES}


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_speedup_never_exceeds_the_amdahl_bound(plans, case):
    plan = plans[case]
    # the share re-derived from the GPU's op times and the placements
    times = {op.name: op_time_s(plan.graph, op, plan.gpu) for op in plan.graph.ops}
    share = sum(times[name] for name, p in plan.placements.items() if p.where != "gpu") \
        / sum(times.values())
    bound = 1 / (1 - share)
    assert plan.speedup <= bound * (1 + 1e-9)
    assert plan.amdahl_bound == pytest.approx(bound)


def _fused_with(plan, name, dep):
    """``name`` was fused into the NDP work that computes ``dep`` (or that ``dep`` joined)."""
    mine, theirs = plan.placements[name], plan.placements[dep]
    if mine.where != "ndp" or mine.carrier == NdpCarrier(name):
        return False
    return mine.carrier == NdpCarrier(dep) or (theirs.where == "ndp" and theirs.carrier == mine.carrier)


def _check_dependencies(plan):
    entry = {e.op: e for e in plan.schedule}
    for op in plan.graph.ops:
        me, placement = entry[op.name], plan.placements[op.name]
        assert me.end_s >= me.start_s
        for dep in op.deps:
            other = entry[dep]
            if placement.where == "on_the_fly" and dep == placement.producer:
                # rides on its producer's writes: starts with it, ends no earlier
                assert me.start_s == other.start_s and me.end_s >= other.end_s - 1e-15
            elif _fused_with(plan, op.name, dep):
                # fused into the NDP work that computes its trigger: finishes with it
                assert me.end_s == other.end_s and me.start_s >= other.start_s
            else:
                assert me.start_s >= entry[dep].end_s - 1e-15, (op.name, dep)


def _check_bandwidth(plan):
    usable = plan.gpu.usable_bandwidth_bps
    previous_end = 0.0
    for start, end, gpu_bps, ndp_bps in plan.bandwidth:
        assert start >= previous_end - 1e-15 and end > start
        assert gpu_bps >= 0 and ndp_bps >= 0
        assert gpu_bps + ndp_bps <= usable * (1 + 1e-9)
        previous_end = end


def _check_queues(plan):
    for intervals in (plan.gpu_busy, plan.ndp_busy):
        for (s0, e0, _), (s1, e1, _) in zip(intervals, intervals[1:]):
            assert e0 <= s1 + 1e-15
    order = {op.name: i for i, op in enumerate(plan.graph.ops)}
    gpu_order = [order[name] for _, _, name in plan.gpu_busy]
    assert gpu_order == sorted(gpu_order)


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_schedule_respects_dependencies_queues_and_bandwidth(plans, case):
    plan = plans[case]
    _check_dependencies(plan)
    _check_bandwidth(plan)
    _check_queues(plan)


@pytest.mark.parametrize("case", CASES[::5], ids=["-".join(c) for c in CASES[::5]])
def test_traffic_is_accounted_once(plans, case):
    plan = plans[case]
    graph = plan.graph
    # each op reads every input and writes every output once: bytes from the shapes
    sizes = {t.id: prod(t.shape) * DTYPE_BYTES[t.dtype] for t in graph.tensors.values()}
    assert plan.dram_bytes_baseline == sum(sizes[t] for op in graph.ops
                                           for t in (*op.inputs, *op.outputs))
    assert plan.dram_bytes_matndp == sum(e.dram_bytes for e in plan.schedule)
    # bytes moved = integral of the bandwidth over time
    moved = sum((end - start) * (g + n) for start, end, g, n in plan.bandwidth)
    assert moved == pytest.approx(plan.dram_bytes_matndp, rel=1e-6)


@pytest.mark.parametrize("policy", ["all", "auto"])
def test_every_offloaded_op_has_a_kernel_and_no_gpu_op_is_skipped(plans, policy, calibration):
    graph = _small("bert-base", "bf16")
    plan = plan_offload(graph, PRESETS["a100"], calibration, PlannerConfig(policy))
    for op in graph.ops:
        placement = plan.placements[op.name]
        if placement.where != "gpu":
            assert op.attrs.get("ndp_kernel") in DEFAULT_KERNELS
    assert {name for _, _, name in plan.gpu_busy} == \
        {n for n, p in plan.placements.items() if p.where == "gpu"}


def test_policy_none_is_the_baseline(calibration):
    graph = _small("resnet50", "fp32")
    plan = plan_offload(graph, PRESETS["v100"], calibration, PlannerConfig("none"))
    assert plan.matndp_s == pytest.approx(plan.baseline_s, rel=1e-12)
    assert plan.offloaded == [] and plan.dram_bytes_matndp == plan.dram_bytes_baseline


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="policy 'greedy'"):
        PlannerConfig("greedy")


# ---- hand-made graphs ---------------------------------------------------------------------

def test_elementwise_op_rides_on_its_producer_and_is_hidden():
    graph = _chain()
    plan = plan_offload(graph, GPU, _calibration({"relu_fwd": (10,)}))
    placement = plan.placements["middle"]
    assert (placement.where, placement.producer, placement.trigger) == ("on_the_fly", "mm1", "y")
    # mm1: 4 GFLOP at 5 TFLOPS = 800 us; it moves 12 MB, the ReLU writes z (4 MB):
    # 16 MB / 90 GB/s = 178 us, NDP compute 125 000 packets x 10 cycles / (16 x 1 GHz) = 78 us
    mm = 5e-6 + 800e-6
    assert plan.matndp_s == pytest.approx(2 * mm)
    assert plan.baseline_s == pytest.approx(2 * mm + 5e-6 + 8e6 / 80e9)
    # the ReLU never re-reads y: 4 MB less than the baseline
    assert plan.dram_bytes_baseline - plan.dram_bytes_matndp == 4 * N


def test_slow_ndp_stretches_its_producer():
    graph = _chain()
    cycles = 20_000     # 125 000 packets x 20 000 / 16 GHz = 156.25 ms
    plan = plan_offload(graph, GPU, _calibration({"relu_fwd": (cycles,)}), PlannerConfig("all"))
    ndp_s = 125_000 * cycles / 16e9
    assert plan.matndp_s == pytest.approx(5e-6 + ndp_s + 5e-6 + 800e-6)
    # and the planner's own policy refuses that trade
    auto = plan_offload(graph, GPU, _calibration({"relu_fwd": (cycles,)}))
    assert auto.placements["middle"].where == "gpu"
    assert auto.matndp_s == pytest.approx(2 * (5e-6 + 800e-6) + 5e-6 + 8e6 / 80e9)


def test_two_phase_kernel_applies_after_its_statistics_and_delays_the_consumer():
    graph = _chain("normalization", "layernorm_fwd")
    plan = plan_offload(graph, GPU, _calibration({"layernorm_fwd": (10, 10)}),
                        PlannerConfig("all"))
    entry = {e.op: e for e in plan.schedule}
    assert plan.placements["middle"].where == "on_the_fly"
    mm = 5e-6 + 800e-6
    # the apply phase re-reads y and writes z after mm1: 8 MB at 90 GB/s (compute 78 us)
    apply_s = 8e6 / 90e9
    assert entry["middle"].end_s == pytest.approx(mm + apply_s)
    assert entry["mm2"].start_s == pytest.approx(mm + apply_s)


def test_op_without_a_producer_runs_standalone_and_overlaps():
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("w", (N,), "fp32", "weight"),
               Tensor("m", (N,), "fp32", "optimizer_state"),
               Tensor("y", (N,), "fp32", "activation")]
    ops = [Op("step", "optimizer", "optimizer", 16 * N, ("w", "m"), ("w", "m"), (),
              {"ndp_kernel": "adam"}),
           Op("mm", "gemm", "forward", 4 * 10 ** 9, ("x",), ("y",))]
    graph = IterationGraph("standalone", tensors, ops, batch=1, dtype="fp32")
    plan = plan_offload(graph, GPU, _calibration({"adam": (10,)}))
    assert plan.placements["step"].where == "ndp"
    # the GEMM (800 us, 8 MB) runs at once; the 16 MB optimizer step shares the bandwidth
    assert plan.matndp_s == pytest.approx(5e-6 + 800e-6)
    _check_bandwidth(plan)


def test_slower_measured_kernels_never_help(calibration, tmp_path):
    graph = _small("bert-base", "bf16")
    fast = plan_offload(graph, PRESETS["v100"], calibration)
    path = tmp_path / "slow.json"
    path.write_text(json.dumps({"schema": SCHEMA, "kernels": {
        name: {"cycles_per_packet": 8 * cost.cycles_per_packet}
        for name, cost in DEFAULT_KERNELS.items()}}))
    slow = plan_offload(graph, PRESETS["v100"], load_calibration(path))
    assert slow.speedup <= fast.speedup
    assert slow.speedup >= 1 - 1e-9          # the auto policy falls back to the GPU


def test_kernel_fuses_into_the_ndp_work_that_computes_its_trigger():
    """x (no producer) -> scale on NDP -> relu (only reader) -> GEMM: the ReLU runs in the
    scale kernel's registers, so the intermediate is neither written nor re-read."""
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("w", (N,), "fp32", "weight"),
               Tensor("s", (N,), "fp32", "activation"), Tensor("r", (N,), "fp32", "activation"),
               Tensor("out", (N,), "fp32", "activation")]
    ops = [Op("scale", "elementwise", "forward", N, ("x",), ("s",), (), {"ndp_kernel": "scale_fwd"}),
           Op("relu", "elementwise", "forward", N, ("s",), ("r",), ("scale",),
              {"ndp_kernel": "relu_fwd"}),
           Op("mm", "gemm", "forward", 4 * 10 ** 9, ("r", "w"), ("out",), ("relu",))]
    graph = IterationGraph("fuse", tensors, ops, batch=1, dtype="fp32")
    plan = plan_offload(graph, GPU, _calibration({"scale_fwd": (8,), "relu_fwd": (10,)}),
                        PlannerConfig("all"))
    assert plan.placements["scale"].carrier == NdpCarrier("scale")
    assert plan.placements["relu"].carrier == NdpCarrier("scale")
    # NDP traffic: read x, write r (s never reaches DRAM)
    assert plan.dram_bytes_ndp == 8 * N
    # 125 000 packets x 18 cycles / 16 GHz = 140.6 us compute; 8 MB / 90 GB/s = 88.9 us
    ndp_s = 125_000 * 18 / 16e9
    entry = {e.op: e for e in plan.schedule}
    assert entry["relu"].end_s == entry["scale"].end_s == pytest.approx(ndp_s)
    assert plan.matndp_s == pytest.approx(ndp_s + 5e-6 + 800e-6)


def test_optimizer_is_deferred_rather_than_stretching_its_producer():
    """A weight-gradient GEMM whose Adam step cannot keep pace with its writes: nothing in
    the iteration waits for the step, so it runs standalone in the GPU's idle bandwidth."""
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("w", (N,), "fp32", "weight"),
               Tensor("g", (N,), "fp32", "weight_gradient"),
               Tensor("m", (N,), "fp32", "optimizer_state"),
               Tensor("y", (N,), "fp32", "activation")]
    ops = [Op("wgrad", "gemm", "backward", 4 * 10 ** 8, ("x",), ("g",)),
           Op("mm", "gemm", "backward", 4 * 10 ** 10, ("x",), ("y",)),
           Op("step", "optimizer", "optimizer", 16 * N, ("w", "g", "m"), ("w", "m"), ("wgrad",),
              {"ndp_kernel": "adam"})]
    graph = IterationGraph("defer", tensors, ops, batch=1, dtype="fp32")
    plan = plan_offload(graph, GPU, _calibration({"adam": (300,)}), PlannerConfig("all"))
    assert plan.placements["step"].where == "ndp"
    assert plan.placements["step"].reason.startswith("deferred")
    # wgrad is memory-bound (8 MB at 80 GB/s = 100 us); 125 000 x 300 / 16 GHz = 2.3 ms of
    # NDP work hides under the 8 ms GEMM
    assert plan.matndp_s == pytest.approx(5e-6 + 100e-6 + 5e-6 + 8000e-6)
    # With a GEMM of 80 us after it the 2.3 ms cannot hide: the step rides wgrad's writes.
    ops[1] = Op("mm", "gemm", "backward", 4 * 10 ** 8, ("x",), ("y",))
    short = plan_offload(IterationGraph("short", tensors, ops, batch=1, dtype="fp32"), GPU,
                         _calibration({"adam": (300,)}), PlannerConfig("all"))
    assert short.placements["step"].where == "on_the_fly"


def test_a_two_phase_kernel_pays_half_its_fixed_cost_in_each_phase():
    """Layer-norm with 1.2 M fixed cycles at 1 GHz: 600 us with the statistics, riding on
    mm1 (78 us + 600 us < its 805 us, so mm1 is not stretched), and 600 us with the apply
    phase, which also takes 78 us of packets (its 8 MB would take 89 us)."""
    plan = plan_offload(_chain("normalization", "layernorm_fwd"), GPU,
                        _calibration({"layernorm_fwd": (10, 10, 1.2e6)}), PlannerConfig("all"))
    entry = {e.op: e for e in plan.schedule}
    mm, packets_s = 5e-6 + 800e-6, 125_000 * 10 / 16e9
    assert entry["mm1"].end_s == pytest.approx(mm)
    assert entry["middle"].end_s == pytest.approx(mm + packets_s + 600e-6)
    assert plan.ndp_cycles == 125_000 * 20 + 1.2e6


def test_the_trigger_is_the_first_input_among_those_written_last():
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("a", (N,), "fp32", "activation"),
               Tensor("b", (N,), "fp32", "activation"), Tensor("s", (N,), "fp32", "activation")]
    ops = [Op("split", "gemm", "forward", 4 * 10 ** 9, ("x",), ("a", "b")),
           Op("sum", "elementwise", "forward", N, ("a", "b"), ("s",), ("split",),
              {"ndp_kernel": "add"})]
    plan = plan_offload(IterationGraph("tie", tensors, ops, batch=1, dtype="fp32"), GPU,
                        _calibration({"add": (9,)}), PlannerConfig("all"))
    assert (plan.placements["sum"].trigger, plan.placements["sum"].producer) == ("a", "split")


def test_a_fused_intermediate_that_another_op_reads_is_still_written():
    """As the fusion test, but the GEMM also reads s: the NDP reads x and writes s and r."""
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("s", (N,), "fp32", "activation"),
               Tensor("r", (N,), "fp32", "activation"), Tensor("out", (N,), "fp32", "activation")]
    ops = [Op("scale", "elementwise", "forward", N, ("x",), ("s",), (), {"ndp_kernel": "scale_fwd"}),
           Op("relu", "elementwise", "forward", N, ("s",), ("r",), ("scale",),
              {"ndp_kernel": "relu_fwd"}),
           Op("mm", "gemm", "forward", 4 * 10 ** 9, ("r", "s"), ("out",), ("relu", "scale"))]
    graph = IterationGraph("fuse-read", tensors, ops, batch=1, dtype="fp32")
    plan = plan_offload(graph, GPU, _calibration({"scale_fwd": (8,), "relu_fwd": (10,)}),
                        PlannerConfig("all"))
    assert plan.placements["relu"].carrier == NdpCarrier("scale")
    assert plan.dram_bytes_ndp == 12 * N


def _act(*names):
    return [Tensor(name, (N,), "fp32", "input" if name == "x" else "weight" if name == "w"
                   else "activation") for name in names]


def test_an_op_waiting_for_more_than_its_trigger_runs_standalone_after_it_all():
    """relu's trigger y comes from mm, but it also waits for mm2, which runs after mm:
    riding on mm's writes would start it before mm2 ends, so it runs standalone once mm2
    has finished (8 MB at 90 GB/s; 78 us of compute)."""
    ops = [Op("mm", "gemm", "forward", 4 * 10 ** 9, ("w",), ("y",)),
           Op("mm2", "gemm", "forward", 4 * 10 ** 9, ("w",), ("e",)),
           Op("relu", "elementwise", "forward", N, ("y",), ("z",), ("mm", "mm2"),
              {"ndp_kernel": "relu_fwd"})]
    plan = plan_offload(IterationGraph("late", _act("w", "y", "e", "z"), ops, batch=1, dtype="fp32"),
                        GPU, _calibration({"relu_fwd": (10,)}), PlannerConfig("all"))
    relu = plan.placements["relu"]
    assert (relu.where, relu.carrier, relu.reason) == \
        ("ndp", NdpCarrier("relu"), "operands arrive after the trigger")
    entry = {e.op: e for e in plan.schedule}
    gemm_s = 5e-6 + 800e-6
    assert entry["relu"].start_s == pytest.approx(2 * gemm_s)
    assert entry["relu"].end_s == pytest.approx(2 * gemm_s + 8e6 / 90e9)
    assert entry["relu"].dram_bytes == 8 * N              # reads y: it did not ride its writes


def test_a_kernel_joins_ndp_work_only_if_nothing_it_waits_for_comes_after_the_works_start():
    """scale starts NDP work at once; relu joins it (it needs only scale's output). shift
    needs relu's output too, but also mm, which runs after the work started: joining it
    would hold the whole work back until mm ends, so shift runs as NDP work of its own,
    after mm, and reads relu's output back."""
    ops = [Op("scale", "elementwise", "forward", N, ("x",), ("a",), (), {"ndp_kernel": "scale_fwd"}),
           Op("mm", "gemm", "forward", 4 * 10 ** 9, ("w",), ("g",)),
           Op("relu", "elementwise", "forward", N, ("a",), ("b",), ("scale",),
              {"ndp_kernel": "relu_fwd"}),
           Op("shift", "elementwise", "forward", N, ("b",), ("r",), ("relu", "mm"),
              {"ndp_kernel": "scale_fwd"})]
    graph = IterationGraph("join", _act("x", "w", "a", "g", "b", "r"), ops, batch=1, dtype="fp32")
    plan = plan_offload(graph, GPU, _calibration({"scale_fwd": (8,), "relu_fwd": (10,)}),
                        PlannerConfig("all"))
    assert plan.placements["relu"].carrier == NdpCarrier("scale")
    shift = plan.placements["shift"]
    assert (shift.carrier, shift.reason) == (NdpCarrier("shift"), "trigger written by NDP")
    entry = {e.op: e for e in plan.schedule}
    # scale + relu: 18 cycles a packet (141 us) for 8 MB (x read, b written; a stays in the
    # registers), beside mm's 8 MB over 805 us
    assert entry["scale"].start_s == entry["relu"].start_s == 0.0
    assert entry["relu"].end_s == pytest.approx(125_000 * 18 / 16e9)
    gemm_s = 5e-6 + 800e-6
    assert entry["shift"].start_s == pytest.approx(gemm_s)
    assert entry["shift"].end_s == pytest.approx(gemm_s + 8e6 / 90e9)
    assert plan.dram_bytes_ndp == 16 * N


def test_the_kernels_riding_on_one_gpu_kernel_add_up_their_traffic():
    """mm1 (805 us: 5 us launch, 800 us of compute; 14 MB) writes y; sixteen ReLUs of y,
    whose outputs nothing reads, ride on its writes, each adding 4 MB of writes and 7.8 us
    of NDP compute. The k-th rider makes mm1's traffic (14 + 4k) MB: 5 us + 70 MB / 90 GB/s
    = 783 us at k = 14, 5 us + 74 MB / 90 GB/s = 827 us at k = 15, so from the 15th on
    riding would stretch mm1 and the rest are deferred to run standalone on the NDP."""
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("w", (3 * N // 2,), "fp32", "weight"),
               Tensor("y", (N,), "fp32", "activation")]
    ops = [Op("mm1", "gemm", "forward", 4 * 10 ** 9, ("x", "w"), ("y",))]
    for k in range(16):
        tensors.append(Tensor(f"r{k}", (N,), "fp32", "activation"))
        ops.append(Op(f"relu{k}", "elementwise", "forward", N, ("y",), (f"r{k}",), ("mm1",),
                      {"ndp_kernel": "relu_fwd"}))
    graph = IterationGraph("fan-out", tensors, ops, batch=1, dtype="fp32")
    plan = plan_offload(graph, GPU, _calibration({"relu_fwd": (1,)}))
    where = [plan.placements[f"relu{k}"].where for k in range(16)]
    assert where == ["on_the_fly"] * 14 + ["ndp"] * 2
    assert plan.placements["relu14"].reason == "deferred: riding would stretch mm1"


def _wgrad_and_steps(mm_flops):
    """wgrad (a 5 GFLOP GEMM: 5 us + 1 ms) writes g1 and g2; two Adam steps of 1 M elements
    (16 MFLOP, 20 MB at 50 GB/s: 5 us + 400 us each on the GPU) read them; a GEMM of
    ``mm_flops`` ends the iteration."""
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("y", (N,), "fp32", "activation")]
    ops = [Op("wgrad", "gemm", "backward", 5 * 10 ** 9, ("x",), ("g1", "g2"))]
    for k in (1, 2):
        tensors += [Tensor(f"w{k}", (N,), "fp32", "weight"),
                    Tensor(f"g{k}", (N,), "fp32", "weight_gradient"),
                    Tensor(f"m{k}", (N,), "fp32", "optimizer_state")]
        ops.append(Op(f"step{k}", "optimizer", "optimizer", 16 * N, (f"w{k}", f"g{k}", f"m{k}"),
                      (f"w{k}", f"m{k}"), ("wgrad",), {"ndp_kernel": "adam"}))
    ops.append(Op("mm", "gemm", "backward", mm_flops, ("x",), ("y",)))
    return IterationGraph("steps", tensors, ops, batch=1, dtype="fp32")


def test_each_deferred_step_holds_the_ndp_from_its_producers_end_for_its_estimate():
    """Each Adam step alone on the NDP: 125 000 packets x 300 cycles / 16 GHz = 2.34375 ms
    (its 20 MB take 222 us). The iteration ends at 1.005 + 2 x 0.405 + mm ms. step1 can
    start at wgrad's end, 1.005 ms, and ends at 3.349 ms; step2 waits for it and would end
    at 5.693 ms. With a 3.385 ms GEMM (16.9 GFLOP) the iteration ends at 5.2 ms: step1 is
    deferred, step2 is not and rides on wgrad's writes. With a 4.385 ms GEMM (6.2 ms) both
    are deferred."""
    calibration = _calibration({"adam": (300,)})
    tight = plan_offload(_wgrad_and_steps(169 * 10 ** 8), GPU, calibration, PlannerConfig("all"))
    assert tight.baseline_s == pytest.approx(1.005e-3 + 2 * 0.405e-3 + 3.385e-3)
    assert [(tight.placements[name].where, tight.placements[name].reason)
            for name in ("step1", "step2")] == [
        ("ndp", "deferred: riding would stretch wgrad"),
        ("on_the_fly", "triggered by the writes of wgrad")]
    roomy = plan_offload(_wgrad_and_steps(219 * 10 ** 8), GPU, calibration, PlannerConfig("all"))
    assert [roomy.placements[name].where for name in ("step1", "step2")] == ["ndp", "ndp"]


def test_the_kernels_riding_on_one_gpu_kernel_add_up_their_compute():
    """mm1 (805 us) writes y; six ReLUs of y ride on its writes, each 125 000 packets x
    24 cycles / 16 GHz = 187.5 us of NDP compute. Four take 5 + 750 us, within mm1's
    805 us; the fifth and sixth would stretch mm1 (5 + 937.5 us) and are deferred."""
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("w", (N,), "fp32", "weight"),
               Tensor("y", (N,), "fp32", "activation")]
    ops = [Op("mm1", "gemm", "forward", 4 * 10 ** 9, ("x", "w"), ("y",))]
    for k in range(6):
        tensors.append(Tensor(f"r{k}", (N,), "fp32", "activation"))
        ops.append(Op(f"relu{k}", "elementwise", "forward", N, ("y",), (f"r{k}",), ("mm1",),
                      {"ndp_kernel": "relu_fwd"}))
    graph = IterationGraph("compute-fan-out", tensors, ops, batch=1, dtype="fp32")
    plan = plan_offload(graph, GPU, _calibration({"relu_fwd": (24,)}), PlannerConfig("all"))
    assert [plan.placements[f"relu{k}"].where for k in range(6)] == ["on_the_fly"] * 4 + ["ndp"] * 2
    entry = {e.op: e for e in plan.schedule}
    assert entry["mm1"].end_s == pytest.approx(805e-6)


def test_the_auto_policy_weighs_a_standalone_ops_whole_ndp_estimate_against_the_gpu():
    """An Adam step with no producer: 5 + 400 us on the GPU (20 MB at 50 GB/s). Standalone
    on the NDP it moves the same 20 MB at 90 GB/s (222.2 us), and computes 125 000 packets
    at c cycles / 16 GHz: at 1000 cycles 7.8125 ms, refused; at 100 cycles 781.25 us,
    refused; at 20 cycles 156.25 us, so 222.2 us, taken."""
    tensors = [Tensor("w", (N,), "fp32", "weight"), Tensor("g", (N,), "fp32", "weight_gradient"),
               Tensor("m", (N,), "fp32", "optimizer_state")]
    ops = [Op("step", "optimizer", "optimizer", 16 * N, ("w", "g", "m"), ("w", "m"), (),
              {"ndp_kernel": "adam"})]
    graph = IterationGraph("alone", tensors, ops, batch=1, dtype="fp32")
    placements = {cycles: plan_offload(graph, GPU, _calibration({"adam": (cycles,)})).placements["step"]
                  for cycles in (1000, 100, 20)}
    assert (placements[1000].where, placements[1000].reason) == \
        ("gpu", "NDP estimate 7812.5 us not below GPU 405.0 us")
    assert (placements[100].where, placements[100].reason) == \
        ("gpu", "NDP estimate 781.2 us not below GPU 405.0 us")
    assert (placements[20].where, placements[20].reason) == ("ndp", "no producer in the iteration")
