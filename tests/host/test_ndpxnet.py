"""NDPXNet: ring all-reduce and expander offload worked out by hand."""

import pytest

from matndp.host.gpu import PRESETS
from matndp.host.ndpxnet import NDPXNetConfig, simulate_ndpxnet, without_optimizer
from matndp.host.report import RunConfig, run_gpu
from matndp.host.zoo import build_model


@pytest.fixture(scope="module")
def bert():
    return build_model("bert-base", batch=4, dtype="bf16", seq_len=64)


def _bytes(graph, kind):
    return sum(t.bytes for t in graph.tensors.values() if t.kind == kind)


def _run(graph, k, **kwargs):
    args = dict(forward_s=0.010, backward_s=0.020, optimizer_gpu_s=0.003,
                expander_optimizer_s=0.001, last_gradient_bytes=1_000_000)
    args.update(kwargs)
    return simulate_ndpxnet(graph, PRESETS["v100"], NDPXNetConfig(k, **args.pop("config", {})),
                            **args)


def test_ring_all_reduce_time_and_traffic(bert):
    grads = _bytes(bert, "weight_gradient")
    result = _run(bert, 4)
    # 2 (K-1)/K of the gradients over one direction of NVLink (300/2 GB/s) at 80 %
    assert result.allreduce_s == pytest.approx(1.5 * grads / (150e9 * 0.8))
    assert result.nvlink_bytes == pytest.approx(2 * 3 * grads, abs=4)
    # overlapped with the 20 ms backward pass except the last 25 MiB bucket
    tail = 1.5 * 25 * 2 ** 20 / 120e9
    exposed = max(1.5 * grads / 120e9 - 0.020, tail)
    assert result.allreduce_exposed_s == pytest.approx(exposed)
    assert result.baseline_s == pytest.approx(0.010 + 0.020 + exposed + 0.003)


def test_single_gpu_has_no_all_reduce(bert):
    result = _run(bert, 1)
    assert result.allreduce_s == 0 and result.allreduce_exposed_s == 0
    assert result.nvlink_bytes == 0


def test_expander_traffic_and_memory_saved(bert):
    grads, weights = _bytes(bert, "weight_gradient"), _bytes(bert, "weight")
    states = _bytes(bert, "optimizer_state")
    result = _run(bert, 8)
    assert result.expander_link_bytes == 8 * (grads + weights)
    assert result.gradient_write_s == pytest.approx(grads / (64e9 * 0.8))
    assert result.weight_read_s == pytest.approx(weights / (64e9 * 0.8))
    assert result.memory_saved_per_gpu_bytes == grads + states
    # 16-bit gradient, FP32 master weight and two moments leave each GPU: 14 B/parameter
    trained = sum(bert.tensors[op.attrs["parameter"]].elements
                  for op in bert.ops if op.phase == "optimizer")
    assert result.memory_saved_per_gpu_bytes >= 14 * trained


def test_more_expanders_never_slow_ndpxnet_down(bert):
    times = [_run(bert, 8, config={"expanders": e}).ndpxnet_s for e in (1, 2, 4, 8)]
    assert times == sorted(times, reverse=True)


@pytest.mark.parametrize("gpus", [0, -2, 2000, True])
def test_bad_gpu_count_is_refused(gpus):
    with pytest.raises(ValueError, match="--gpus"):
        NDPXNetConfig(gpus)


def test_without_optimizer_drops_exactly_the_optimizer_step(bert):
    local = without_optimizer(bert)
    assert [op.name for op in local.ops] == [op.name for op in bert.ops if op.phase != "optimizer"]
    assert local.parameters() == bert.parameters()


def test_data_parallel_run_reports_both_schemes_within_the_bound():
    report = run_gpu(RunConfig("resnet50", "a100", 16, "bf16", gpus=4))
    assert report["ndpxnet"]["baseline"]["gpus"] == 4
    assert report["speedup"] <= report["amdahl_bound"] * (1 + 1e-9)
    # link energies from the graph's bytes: the ring moves 4 x 2 (4-1)/4 of the gradients
    # over NVLink (1.3 pJ/bit); NDPXNet writes the gradients and reads the weights back
    # over CXL (8 pJ/bit) on each of the 4 GPUs
    graph = build_model("resnet50", batch=16, dtype="bf16")
    grads, weights = _bytes(graph, "weight_gradient"), _bytes(graph, "weight")
    assert grads == weights == 2 * 25_557_032                 # 16-bit copies
    assert report["energy_baseline"]["link_j"] == pytest.approx(6 * grads * 8 * 1.3e-12)
    assert report["energy_matndp"]["link_j"] == pytest.approx(4 * (grads + weights) * 8 * 8e-12)
