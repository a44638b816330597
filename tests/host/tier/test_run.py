"""run_model: a zoo model on the tiers, its metrics carrying the configuration it ran."""

import pytest

from matndp.host.tier import tier_policy
from matndp.host.tier.run import run_model


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
