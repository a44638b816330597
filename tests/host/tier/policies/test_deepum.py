"""DeepUM when the pages it is prefetching are all that could make room."""

from matndp.host.tier.run import run_model


def test_an_op_waits_for_prefetches_in_flight_when_nothing_else_can_leave():
    """ResNet-50 at batch 64 with HBM at 12.5 % of its footprint: at an accumulation in
    the backward pass the pages not in the op and not arriving for the next eight ops are
    fewer than the op needs; the op waits for the prefetches to land, then evicts (it used
    to stop with a capacity error). The trace check runs inside."""
    run = run_model("resnet50", policy="deepum", batch=64, hbm_fraction=0.125)
    metrics = run.metrics
    assert metrics["hbm_peak_bytes"] <= metrics["hbm_capacity_bytes"]
    assert metrics["iteration_s"] > metrics["ideal_iteration_s"]
