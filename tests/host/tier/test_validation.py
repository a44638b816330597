"""The comparison of docs/validation.md (tiering section) as a regression guard: at the
published HBM fractions the static planner moves no more bytes than LRU paging or G10-like
migration and gives at least their throughput per watt. Long: run with ``-m slow``."""

import pytest

from matndp.host.tier.run import run_model


@pytest.mark.slow
@pytest.mark.parametrize("model, batch", [("resnet50", 32), ("bert-base", 32), ("gpt2", 8),
                                          ("vgg16_bn", 32)])
@pytest.mark.parametrize("devices", [1, 8])
def test_static_planning_beats_both_baselines(model, batch, devices):
    for fraction in (0.125, 0.25, 0.5):
        try:
            runs = {p: run_model(model, policy=p, batch=batch, hbm_fraction=fraction,
                                 flash_devices=devices).metrics for p in ("lru", "g10", "tm")}
        except ValueError as error:
            assert "working set" in str(error)
            continue
        tm = runs["tm"]
        for baseline in ("lru", "g10"):
            assert tm["inter_tier_bytes"] <= runs[baseline]["inter_tier_bytes"] * 1.001, (fraction, baseline)
            assert tm["throughput_per_watt"] >= runs[baseline]["throughput_per_watt"] * 0.95, (fraction, baseline)
