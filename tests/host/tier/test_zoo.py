"""Every policy on the zoo models at small batch: the same invariants as on the
hand-made graphs, through the same entry point the command line uses."""

import pytest

from matndp.host.tier import POLICIES, check_plan, flash_preset
from matndp.host.tier.plan import InfeasibleError
from matndp.host.tier.run import run_model


# (model, batch, sequence length, HBM fraction): the smallest fraction at which these
# batches fit the largest op's working set is model-dependent (weights dominate at
# small batch).
ZOO_CASES = [
    ("resnet50", 2, None, 0.25),
    ("vgg16_bn", 2, None, 0.75),
    ("bert-base", 2, None, 0.5),
    ("gpt2", 1, 128, 0.5),
]


@pytest.mark.parametrize("model, batch, seq_len, fraction", ZOO_CASES)
def test_zoo_model_under_every_policy(model, batch, seq_len, fraction):
    results = {}
    for policy in POLICIES:
        try:
            results[policy] = run_model(model, policy=policy, batch=batch, seq_len=seq_len,
                                        hbm_fraction=fraction)
        except InfeasibleError as error:
            # FlashNeuron keeps all but the activations it offloads: they may not fit.
            assert policy == "flashneuron", error
    zssd = flash_preset("zssd")
    for policy, result in results.items():
        metrics = result.metrics
        assert result.trace_totals["peak_pages"] <= result.capacity_pages
        assert metrics["hbm_peak_bytes"] <= metrics["hbm_capacity_bytes"]
        assert metrics["energy_j"] > 0 and metrics["throughput_per_watt"] > 0
        # The Z-SSD's reads and programs share its dies and buses: no steady iteration is
        # shorter than its flash traffic at their bandwidths, one after the other.
        flash_s = (metrics["flash_to_hbm_bytes"] / zssd.read_bytes_per_s
                   + metrics["hbm_to_flash_bytes"] / zssd.program_bytes_per_s)
        assert metrics["iteration_s"] >= flash_s * (1 - 1e-9), policy
        # Every byte through flash is charged its page reads and programs (and energy).
        assert metrics["flash_page_reads"] * zssd.page_bytes >= metrics["flash_to_hbm_bytes"], policy
        assert metrics["flash_page_programs"] * zssd.page_bytes >= metrics["hbm_to_flash_bytes"], policy
    assert results["ideal"].metrics["inter_tier_bytes"] == 0
    assert results["ideal"].metrics["stall_s"] == 0
    for policy in ("lru", "g10", "tm"):
        assert results[policy].metrics["inter_tier_bytes"] > 0     # it really is short of HBM
    tm = results["tm"]
    assert tm.metrics["demand_fetch_bytes"] == 0
    check_plan(tm.plans[-1], tm.lifetimes)
    assert tm.plans[1] == tm.plans[2]            # static reuse: iteration 2's plan runs again


def test_zoo_tm_traffic_falls_as_hbm_grows():
    traffic = [run_model("resnet50", policy="tm", batch=4, hbm_fraction=f).metrics["inter_tier_bytes"]
               for f in (0.125, 0.25, 0.5, 0.75, 1.0)]
    assert all(a > b for a, b in zip(traffic, traffic[1:])), traffic
    assert traffic[-1] == 0
