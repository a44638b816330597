"""run_model: a zoo model on the tiers, its metrics carrying the configuration it ran."""

import pytest

from matndp.host.tier import tier_policy
from matndp.host.tier.run import run_model, sweep


@pytest.mark.parametrize("policy, name", [("lru", "lru"), (tier_policy("g10"), "g10")])
def test_the_metrics_echo_the_configuration_that_ran(policy, name):
    metrics = run_model("resnet50", policy=policy, batch=1, hbm_fraction=0.5, gpu="A100",
                        flash_devices=2, link_gbs=16, iterations=1).metrics
    assert metrics["config"]["run"] == {"gpu": "a100", "iterations": 1, "policy": name}
    assert metrics["config"]["tier"]["link_bytes_per_s"] == 16e9
    assert {key: metrics[key] for key in ("model", "gpu", "batch", "hbm_fraction", "flash",
                                          "flash_devices", "link_gbs", "dtype")} == \
        {"model": "resnet50", "gpu": "a100", "batch": 1, "hbm_fraction": 0.5, "flash": "zssd",
         "flash_devices": 2, "link_gbs": 16, "dtype": "fp32"}


@pytest.mark.parametrize("kwargs, message", [
    ({"batch": 0, "hbm_fraction": 0.5}, "batch must be >= 1, got 0"),
    ({}, "give an HBM fraction or an HBM size"),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        run_model("resnet50", policy="lru", **kwargs)


@pytest.mark.parametrize("check", [True, False])
def test_an_unchecked_run_keeps_no_event_log(check):
    run = run_model("resnet50", policy="lru", batch=1, hbm_fraction=0.5, iterations=1,
                    check=check)
    assert (run.log is not None, run.trace_totals is not None) == (check, check)


def test_a_sweep_reports_a_configuration_that_cannot_run_with_its_reason():
    """1 % of ResNet-50's footprint is below its largest op's working set: that row says
    so instead of carrying metrics; half of it runs."""
    rows = sweep(["resnet50"], [0.01, 0.5], ["lru"], progress=False, batch=1, iterations=1)
    assert [sorted(row) for row in rows[:1]] == [["hbm_fraction", "infeasible", "model", "policy"]]
    assert (rows[0]["model"], rows[0]["hbm_fraction"], rows[0]["policy"]) == ("resnet50", 0.01, "lru")
    assert rows[0]["infeasible"].startswith("HBM capacity ") and "working set" in rows[0]["infeasible"]
    assert (rows[1]["model"], rows[1]["hbm_fraction"], rows[1]["policy"]) == ("resnet50", 0.5, "lru")
    assert "infeasible" not in rows[1] and rows[1]["config"]["run"]["iterations"] == 1


@pytest.mark.parametrize("fractions, policies, message", [
    ([0.5], ["fifo"], "unknown policy 'fifo'"),
    ([0.5, 0.0], ["lru"], "^HBM fraction must be > 0, got 0.0$"),
    ([-1], ["lru"], "^HBM fraction must be > 0, got -1$"),
])
def test_a_sweep_refuses_bad_arguments_before_anything_runs(fractions, policies, message):
    with pytest.raises(ValueError, match=message):
        sweep(["no-such-model"], fractions, policies, progress=False)
