"""NDPXNet: ring all-reduce and expander offload worked out by hand, on BERT and on a
model of round sizes where every term of the model's definition can be checked alone."""

import re

import pytest

from matndp.host.gpu import PRESETS
from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.ndpxnet import NDPXNetConfig, simulate_ndpxnet, without_optimizer
from matndp.host.report import RunConfig, run_gpu
from matndp.host.zoo import build_model

from .offload.graphs import GPU as ROUND_GPU


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


# ---- a hand-made model with round sizes ---------------------------------------------------
# 10 M FP32 parameters: weights 40 MB, gradients 40 MB, two moments 80 MB. The round GPU of
# tests/host/offload/graphs.py has 100 GB/s of NVLink over both directions: 40 GB/s one way
# at 80 %. The expander link: 64 GB/s at 80 % = 51.2 GB/s each way; one expander's DRAM:
# 307.2 GB/s.

PARAMETERS = 10_000_000
WEIGHTS = GRADIENTS = 4 * PARAMETERS
STATES = 2 * 4 * PARAMETERS
LINK_BPS = 64e9 * 0.8
NVLINK_BPS = 100e9 / 2 * 0.8


def _round_model():
    tensors = [Tensor("w", (PARAMETERS,), "fp32", "weight"),
               Tensor("g", (PARAMETERS,), "fp32", "weight_gradient"),
               Tensor("m", (PARAMETERS,), "fp32", "optimizer_state"),
               Tensor("v", (PARAMETERS,), "fp32", "optimizer_state"),
               Tensor("x", (1000,), "fp32", "input"),
               Tensor("y", (1000,), "fp32", "activation")]
    ops = [Op("fc", "gemm", "forward", 10 ** 6, ("x", "w"), ("y",)),
           Op("fc_wgrad", "gemm", "backward", 10 ** 6, ("x", "y"), ("g",)),
           Op("step", "optimizer", "optimizer", 16 * PARAMETERS, ("w", "g", "m", "v"),
              ("w", "m", "v"), ("fc_wgrad",), {"ndp_kernel": "adam", "parameter": "w"})]
    return IterationGraph("round", tensors, ops, batch=1, dtype="fp32")


def _round(k, forward_s, backward_s, expander_optimizer_s=0.0, last=4_000_000, **config):
    return simulate_ndpxnet(_round_model(), ROUND_GPU, NDPXNetConfig(k, **config),
                            forward_s=forward_s, backward_s=backward_s, optimizer_gpu_s=0.003,
                            expander_optimizer_s=expander_optimizer_s, last_gradient_bytes=last)


def test_the_expanders_dram_traffic_is_that_of_its_reduction_and_optimizer_step():
    """Each of the K GPUs writes its gradient (K x 40 MB), the last arrival reads the other
    K - 1 (3 x 40 MB), the optimizer reads and writes both moments (2 x 80 MB) and writes
    the weights (40 MB), which the K GPUs read back (4 x 40 MB): 640 MB at K = 4."""
    result = _round(4, forward_s=1e-3, backward_s=1e-3)
    expander_bytes = 4 * 40e6 + 3 * 40e6 + 2 * 80e6 + 40e6 + 4 * 40e6
    assert expander_bytes == 640e6
    assert result.expander_s == pytest.approx(expander_bytes / 307.2e9)
    # two expanders share it: half the time each
    assert _round(4, 1e-3, 1e-3, expanders=2).expander_s == pytest.approx(expander_bytes / 614.4e9)
    # what crosses the links: each GPU writes its gradients and reads the weights back
    assert result.expander_link_bytes == 4 * (40_000_000 + 40_000_000)
    assert result.gradient_write_s == pytest.approx(40e6 / LINK_BPS)
    assert result.weight_read_s == pytest.approx(40e6 / LINK_BPS)
    assert result.memory_saved_per_gpu_bytes == 40_000_000 + 80_000_000


@pytest.mark.parametrize("case, k, forward_s, backward_s, optimizer_s, config, exposed_s", [
    # the expander's DRAM (2.083 ms) is the slowest stream: what outlasts the 1 ms backward
    ("expander DRAM", 4, 1e-3, 1e-3, 0.0, {}, 640e6 / 307.2e9 - 1e-3),
    # behind a fast expander, writing the 40 MB of gradients (0.781 ms) sets the pace
    ("gradient writes", 4, 1e-3, 0.5e-3, 0.0, {"expander_memory_gbs": 10_000.0},
     40e6 / LINK_BPS - 0.5e-3),
    # the optimizer's compute, 4 ms spread over two expanders
    ("expander compute", 4, 1e-3, 1e-3, 4e-3, {"expanders": 2}, 2e-3 - 1e-3),
    # a long backward hides the stream but not the last gradient's 4 MB write (78 us), and
    # a 0.5 ms forward pass cannot hide the 0.781 ms weight read
    ("tails", 4, 0.5e-3, 10e-3, 0.0, {}, 4e6 / LINK_BPS + (40e6 / LINK_BPS - 0.5e-3)),
])
def test_ndpxnet_exposes_what_its_streams_do_not_hide(case, k, forward_s, backward_s,
                                                      optimizer_s, config, exposed_s):
    result = _round(k, forward_s, backward_s, optimizer_s, **config)
    assert result.ndpxnet_exposed_s == pytest.approx(exposed_s)
    assert result.ndpxnet_s == pytest.approx(forward_s + backward_s + exposed_s)


@pytest.mark.parametrize("k, backward_s, bucket_bytes, exposed_s", [
    # ring: 2 (K - 1) / K = 1.5 of the 40 MB over 40 GB/s = 1.5 ms; the last 25 MiB bucket
    # (0.983 ms) is always exposed
    (4, 1e-3, 25 * 2 ** 20, 1.5e-3 * 25 * 2 ** 20 / 40e6),
    (4, 0.2e-3, 25 * 2 ** 20, 1.5e-3 - 0.2e-3),
    # a bucket larger than all the gradients: the whole all-reduce is the last bucket
    (4, 1e-3, 100 * 2 ** 20, 1.5e-3),
    # two GPUs: the ring moves 2 (2 - 1) / 2 = 1 times the gradients
    (2, 0.5e-3, 25 * 2 ** 20, 1e-3 * 25 * 2 ** 20 / 40e6),
])
def test_the_baseline_exposes_the_all_reduce_the_backward_pass_does_not_hide(
        k, backward_s, bucket_bytes, exposed_s):
    result = _round(k, forward_s=1e-3, backward_s=backward_s, bucket_bytes=bucket_bytes)
    ring = 2 * (k - 1) / k
    assert result.allreduce_s == pytest.approx(ring * 40e6 / NVLINK_BPS)
    assert result.allreduce_exposed_s == pytest.approx(exposed_s)
    assert result.baseline_s == pytest.approx(1e-3 + backward_s + exposed_s + 0.003)
    assert result.nvlink_bytes == k * ring * 40_000_000
    assert result.speedup == pytest.approx(result.baseline_s / result.ndpxnet_s)


@pytest.mark.parametrize("fields, message", [
    ({"gpus": 0}, "--gpus must be an integer in 1..1024, not 0"),
    ({"gpus": 1025}, "--gpus must be an integer in 1..1024, not 1025"),
    ({"gpus": 2.0}, "--gpus must be an integer in 1..1024, not 2.0"),
    ({"gpus": 2, "expanders": 0}, "NDPXNet: expanders, link and memory bandwidth must be positive"),
    ({"gpus": 2, "link_gbs": 0.0}, "NDPXNet: expanders, link and memory bandwidth must be positive"),
    ({"gpus": 2, "expander_memory_gbs": -1.0},
     "NDPXNet: expanders, link and memory bandwidth must be positive"),
    ({"gpus": 2, "link_efficiency": 0.0}, "NDPXNet: link_efficiency must be in (0, 1]"),
    ({"gpus": 2, "link_efficiency": 1.01}, "NDPXNet: link_efficiency must be in (0, 1]"),
])
def test_each_configuration_refusal_is_one_whole_message(fields, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        NDPXNetConfig(**fields)


@pytest.mark.parametrize("fields", [{"gpus": 1}, {"gpus": 1024}, {"gpus": 2, "link_efficiency": 1.0}])
def test_the_bounds_themselves_are_accepted(fields):
    NDPXNetConfig(**fields)
