"""NDP kernel costs: packets per tensor and their compute time."""

from types import SimpleNamespace

import pytest

from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.offload import OffloadCosts
from matndp.host.offload.costs import fused_duration

from .graphs import GPU, calibration_of


def _costs(elements, dtype):
    tensors = [Tensor("x", (elements,), dtype, "input"), Tensor("y", (elements,), dtype, "activation")]
    op = Op("relu", "elementwise", "forward", elements, ("x",), ("y",), (), {"ndp_kernel": "relu_fwd"})
    graph = IterationGraph("relu", tensors, [op], batch=1, dtype=dtype)
    return OffloadCosts(graph, GPU, calibration_of({"relu_fwd": (10, 0, 500)})), op


@pytest.mark.parametrize("elements, dtype, packets", [
    (1_000_000, "fp32", 125_000),
    (1_000_001, "fp32", 125_001),        # a partial packet costs a whole one
    (1_000_000, "bf16", 125_000),        # 16-bit: half the packets at twice the instructions
])
def test_packets_are_fp32_packet_equivalents_rounded_up(elements, dtype, packets):
    costs, op = _costs(elements, dtype)
    assert costs.packets(op, None) == packets


def test_a_standalone_kernel_costs_its_packets_on_every_slice_and_reads_everything():
    costs, op = _costs(1_000_000, "fp32")
    stream, after = costs.phases(op, None, on_the_fly=False)
    # 125 000 packets x 10 cycles on 16 slices at 1 GHz, plus 500 fixed cycles
    assert stream.compute_s == pytest.approx(125_000 * 10 / 16e9 + 500e-9)
    assert (stream.bytes, stream.packets, after) == (8_000_000, 125_000, None)
    assert costs.alone_s(stream) == pytest.approx(8e6 / 90e9)      # memory-bound alone


def test_a_triggered_kernel_reads_its_trigger_only_when_it_does_not_ride_the_writes():
    costs, op = _costs(1_000_000, "fp32")
    standalone, _ = costs.phases(op, "x", on_the_fly=False)
    riding, _ = costs.phases(op, "x", on_the_fly=True)
    assert standalone.bytes == 4_000_000 + 4_000_000      # reads x, writes y
    assert riding.bytes == 4_000_000                      # x arrives with the producer's writes


@pytest.mark.parametrize("producer_s, compute_s, extra_bytes, expected_s", [
    (1e-6, 0.0, 0, 1e-6),                    # nothing rides: the kernel's own time, however short
    (1e-3, 0.0, 2_000_000, 1e-6 + 10e-3),    # (8 + 2) MB at 1 GB/s after the 1 us launch
    (1e-3, 50e-3, 0, 1e-6 + 50e-3),          # the NDP compute is the slowest
    (20e-3, 1e-3, 1_000, 20e-3),             # the GPU kernel is the slowest
])
def test_a_fused_kernel_ends_with_the_slowest_of_gpu_ndp_and_combined_traffic(
        producer_s, compute_s, extra_bytes, expected_s):
    costs, op = _costs(1_000_000, "fp32")           # the ReLU moves 8 MB
    memory = SimpleNamespace(usable_bps=1e9, launch_overhead_s=1e-6)
    assert fused_duration(costs.graph, memory, op, producer_s, compute_s, extra_bytes) == \
        pytest.approx(expected_s, rel=1e-12)
