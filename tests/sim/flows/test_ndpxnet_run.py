"""``matndp sim --ndpxnet K``: a model's gradients in buckets, worked out by hand; the
set-up's errors; and (slow) a run through the expander slice's RTL."""

import pytest

from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.offload.records import ScheduledOp
from matndp.sim.flows.ndpxnet_run import Bucket, NDPXNetSetup, gradient_buckets, run_ndpxnet


class _Plan:
    def __init__(self, times):
        self.schedule = [ScheduledOp(op, "gemm", "backward", "gpu", start, end, 0)
                         for op, (start, end) in times.items()]


def _graph():
    # Backward order: c writes 300 elements of gradient, b 200 and a 100 + 50 (weight, bias).
    sizes = {"a.w": 100, "a.b": 50, "b.w": 200, "c.w": 300}
    tensors = [Tensor(name, (n,), "fp32", "weight") for name, n in sizes.items()]
    tensors += [Tensor(f"grad:{name}", (n,), "fp32", "weight_gradient") for name, n in sizes.items()]
    tensors.append(Tensor("x", (10,), "fp32", "input"))
    ops = [Op("c.wgrad", "gemm", "backward", 1, ("x",), ("grad:c.w",)),
           Op("b.wgrad", "gemm", "backward", 1, ("x",), ("grad:b.w",), ("c.wgrad",)),
           Op("a.wgrad", "gemm", "backward", 1, ("x",), ("grad:a.w", "grad:a.b"), ("b.wgrad",))]
    return IterationGraph("g", tensors, ops, batch=1, dtype="fp32")


def test_buckets_follow_the_backward_order_and_hold_at_most_the_bucket_bytes():
    plan = _Plan({"c.wgrad": (1.0, 2.0), "b.wgrad": (2.0, 3.0), "a.wgrad": (3.0, 3.5)})
    # 2000 bytes a bucket: c (1200 B) and b (800 B) fill one exactly; a's weight and bias
    # (600 B) start the next. A slice's share of 500 elements over 7 slices: 72.
    buckets = gradient_buckets(_graph(), plan, slices=7, bucket_bytes=2000)
    assert buckets == [Bucket(0, ("grad:c.w", "grad:b.w"), 500, 72, 1.0, 3.0),
                       Bucket(1, ("grad:a.w", "grad:a.b"), 150, 22, 3.0, 3.5)]
    # A tensor bigger than a bucket is a bucket of its own.
    alone = gradient_buckets(_graph(), plan, slices=1, bucket_bytes=100)
    assert [bucket.tensors for bucket in alone] == [("grad:c.w",), ("grad:b.w",), ("grad:a.w",), ("grad:a.b",)]


@pytest.mark.parametrize("kwargs, message", [
    ({"gpus": 1}, "2 to 8 GPUs"),
    ({"gpus": 9}, "2 to 8 GPUs"),
    ({"gpus": True}, "2 to 8 GPUs"),
    ({"model": "alexnet"}, "alexnet"),
    ({"batch": 0}, "--batch"),
    ({"bucket_sectors": 0}, "--bucket-sectors"),
    ({"pressure": 1.0}, "pressure"),
    ({"skew": -1}, "skew"),
])
def test_bad_setups_are_refused(kwargs, message):
    with pytest.raises((ValueError, KeyError), match=message):
        NDPXNetSetup(**kwargs)


@pytest.mark.slow
@pytest.mark.xdist_group("expander_slice")
def test_a_model_share_through_the_rtl_is_bit_exact_and_prices_the_model(tmp_path):
    setup = NDPXNetSetup(gpus=4, model="resnet50", batch=2, bucket_sectors=4)
    report = run_ndpxnet(tmp_path, setup, progress=lambda message: None)
    rtl, whole = report["rtl"], report["whole_model"]
    assert rtl["bit_exact"]
    # SGD with momentum: 4 gradient writes, 3 loads of the other copies, param and
    # momentum each loaded and stored.
    assert rtl["memory_accesses_per_reduced_sector"] == 4 + 3 + 4
    assert rtl["sectors_per_copy"] == 4 * len(rtl["buckets_run"])
    assert whole["expander_cost"]["cycles_per_reduced_sector"] == rtl["cycles_per_reduced_sector"]
    assert whole["expander_compute_s"] == pytest.approx(
        whole["share_sectors_per_slice"] * rtl["cycles_per_reduced_sector"] / report["clock_hz"])
    assert (tmp_path / "report.md").read_text().startswith("# NDPXNet through the RTL: resnet50, 4 GPUs")
