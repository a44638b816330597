"""GPU timing: presets, roofline times on hand-made graphs, the baseline timeline."""

import dataclasses

import pytest

from matndp.host.gpu import Efficiency, GPUPreset, PRESETS, baseline_timeline, get_preset, op_time_s
from matndp.host.graph import IterationGraph, Op, Tensor


# NVIDIA V100 and A100 whitepapers, H100 datasheet: FP32 TFLOPS, 16-bit tensor TFLOPS, GB/s,
# memory controllers
@pytest.mark.parametrize("name, fp32, tensor, bandwidth, controllers", [
    ("v100", 15.7, 125, 900, 8),
    ("a100", 19.5, 312, 1555, 10),
    ("h100", 66.9, 989.4, 3350, 10),
])
def test_presets_carry_the_published_peaks(name, fp32, tensor, bandwidth, controllers):
    preset = get_preset(name.upper())
    assert (preset.fp32_tflops, preset.tensor_tflops, preset.memory_gbs,
            preset.memory_controllers) == (fp32, tensor, bandwidth, controllers)


def test_the_npu_preset_is_a_tpu_v4_class_chip():
    """Jouppi et al., ISCA 2023, and Google Cloud's TPU v4 page: 275 TFLOPS BF16, 32 GiB
    of HBM2 in four stacks at 1200 GB/s, 192 W; its FP32 vector peak is an assumption."""
    npu = get_preset("tpu-v4")
    assert (npu.tensor_tflops, npu.memory_gbs, npu.capacity_gb, npu.memory_controllers,
            npu.tdp_w, npu.kind) == (275.0, 1200.0, 32.0, 4, 192.0, "npu")
    assert {PRESETS[name].kind for name in ("v100", "a100", "h100")} == {"gpu"}


def test_a_preset_of_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be gpu or npu, got 'fpga'"):
        dataclasses.replace(PRESETS["v100"], kind="fpga")


def test_unknown_preset_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown GPU preset 'p100'"):
        get_preset("p100")


# A GPU with round numbers so that times can be worked out by hand.
ROUND = GPUPreset("round", fp32_tflops=10.0, tensor_tflops=80.0, memory_gbs=100.0,
                  capacity_gb=16, memory_controllers=4, l2_mb=4, nvlink_gbs=100, tdp_w=200,
                  launch_overhead_s=5e-6,
                  efficiency=Efficiency(compute={"gemm": 0.5}, compute_default=0.25,
                                        memory={"gemm": 0.8, "elementwise": 0.8},
                                        memory_default=0.5, achievable_bandwidth=0.9))


def _graph(dtype="fp32"):
    tensors = [Tensor("a", (1000, 1000), dtype, "activation"),
               Tensor("w", (1000, 1000), dtype, "weight"),
               Tensor("y", (1000, 1000), dtype, "activation"),
               Tensor("z", (1000, 1000), dtype, "activation")]
    ops = [Op("mm", "gemm", "forward", 2 * 1000 ** 3, ("a", "w"), ("y",)),
           Op("relu", "elementwise", "forward", 1000 ** 2, ("y",), ("z",), ("mm",))]
    return IterationGraph("hand", tensors, ops, batch=1, dtype=dtype)


def test_compute_bound_gemm():
    graph = _graph()
    # 2 GFLOP at 10 TFLOPS x 0.5 = 400 us; 12 MB at 100 GB/s x 0.8 = 150 us
    assert op_time_s(graph, graph.ops[0], ROUND) == pytest.approx(5e-6 + 400e-6)


def test_sixteen_bit_gemm_uses_tensor_cores_and_becomes_memory_bound():
    graph = _graph("bf16")
    # 2 GFLOP at 80 x 0.5 TFLOPS = 50 us; 6 MB at 80 GB/s = 75 us
    assert op_time_s(graph, graph.ops[0], ROUND) == pytest.approx(5e-6 + 75e-6)


def test_memory_bound_elementwise():
    graph = _graph()
    # 8 MB at 100 GB/s x 0.8 = 100 us; 1 MFLOP at 10 TFLOPS x 0.25 = 0.4 us
    assert op_time_s(graph, graph.ops[1], ROUND) == pytest.approx(5e-6 + 100e-6)


def test_memory_efficiency_is_capped_by_the_achievable_bandwidth():
    efficiency = Efficiency(memory={"elementwise": 0.99}, achievable_bandwidth=0.9)
    assert efficiency.memory_for("elementwise") == 0.9


def test_timeline_runs_the_ops_back_to_back_in_graph_order():
    graph = _graph()
    timeline = baseline_timeline(graph, ROUND)
    assert [e.op for e in timeline] == ["mm", "relu"]
    assert timeline[0].start_s == 0 and timeline[0].end_s == timeline[1].start_s
    assert timeline[1].end_s == pytest.approx(5e-6 + 400e-6 + 5e-6 + 100e-6)
    assert [e.bytes for e in timeline] == [12_000_000, 8_000_000]


@pytest.mark.parametrize("preset", list(PRESETS.values()), ids=list(PRESETS))
def test_no_kernel_exceeds_peak_compute_or_bandwidth(preset):
    from matndp.host.zoo import build_model
    graph = build_model("bert-base", batch=2, dtype="bf16", seq_len=32)
    for op, entry in zip(graph.ops, baseline_timeline(graph, preset)):
        busy = entry.duration_s - preset.launch_overhead_s
        assert graph.op_bytes(op) / busy <= preset.bandwidth_bps * (1 + 1e-9)
        peak = preset.tensor_tflops if op.kind in ("gemm", "conv") else preset.fp32_tflops
        assert op.flops / busy <= peak * 1e12 * (1 + 1e-9)


@pytest.mark.parametrize("field", ["fp32_tflops", "tensor_tflops", "memory_gbs", "capacity_gb", "tdp_w",
                                   "nvlink_gbs"])
def test_a_preset_with_a_non_positive_peak_is_refused_by_name(field):
    with pytest.raises(ValueError, match=f"GPU preset 'v100': {field} must be positive"):
        dataclasses.replace(PRESETS["v100"], **{field: 0})
