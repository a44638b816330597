"""Two-tier runs (no host DRAM) keep the results they had before the host tier and the
page-granular ``lru`` existed, bit for bit, for ``ideal``, ``g10`` and ``tm``.

The expected numbers were produced by the tier model at commit ab08d7f with

    from matndp.host.tier.run import run_model
    run_model(model, policy=policy, batch=batch, hbm_fraction=fraction, flash=flash,
              flash_devices=devices).metrics

for every key below (model/batch/fraction/flash x devices/policy).
"""

import pytest

from matndp.host.tier.run import run_model


EXPECTED = {
    'gpt2/2/0.5/zssdx1/ideal': {'iteration_s': 0.15740839946639296, 'stall_s': 0.0, 'inter_tier_bytes': 0, 'faults': 0, 'energy_j': 25.37139546521708, 'hbm_peak_bytes': 6296305664},
    'gpt2/2/0.5/zssdx1/g10': {'iteration_s': 2.6907761498035248, 'stall_s': 2.5333677503371144, 'inter_tier_bytes': 7393722368, 'faults': 0, 'energy_j': 338.44147239154097, 'hbm_peak_bytes': 3147816960},
    'gpt2/2/0.5/zssdx1/tm': {'iteration_s': 2.217995508706207, 'stall_s': 2.0605871092397967, 'inter_tier_bytes': 6296305664, 'faults': 0, 'energy_j': 280.3622053078113, 'hbm_peak_bytes': 3148152832},
    'resnet50/8/0.25/zssdx8/ideal': {'iteration_s': 0.023250538504887175, 'stall_s': 0.0, 'inter_tier_bytes': 0, 'faults': 0, 'energy_j': 3.727866687403021, 'hbm_peak_bytes': 944066560},
    'resnet50/8/0.25/zssdx8/g10': {'iteration_s': 0.09172140268719525, 'stall_s': 0.06847086418230652, 'inter_tier_bytes': 1816002560, 'faults': 0, 'energy_j': 14.06952702031295, 'hbm_peak_bytes': 235974656},
    'resnet50/8/0.25/zssdx8/tm': {'iteration_s': 0.07273728196558002, 'stall_s': 0.04948674346069171, 'inter_tier_bytes': 1484242944, 'faults': 0, 'energy_j': 11.486213754948977, 'hbm_peak_bytes': 236015616},
    'bert-base/8/0.25/tlcx1/ideal': {'iteration_s': 0.04978328053072888, 'stall_s': 0.0, 'inter_tier_bytes': 0, 'faults': 0, 'energy_j': 7.6326542495530605, 'hbm_peak_bytes': 2224443392},
    'bert-base/8/0.25/tlcx1/g10': {'iteration_s': 2.069093936857768, 'stall_s': 2.0193106563269962, 'inter_tier_bytes': 6000259072, 'faults': 343, 'energy_j': 258.96516398639045, 'hbm_peak_bytes': 556109824},
    'bert-base/8/0.25/tlcx1/tm': {'iteration_s': 1.6830259985464715, 'stall_s': 1.633242718015774, 'inter_tier_bytes': 4216221696, 'faults': 0, 'energy_j': 211.1697996590557, 'hbm_peak_bytes': 556109824},
}


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_two_tier_result_unchanged(key):
    model, batch, fraction, flash, policy = key.split("/")
    flash, devices = flash.split("x")
    metrics = run_model(model, policy=policy, batch=int(batch), hbm_fraction=float(fraction),
                        flash=flash, flash_devices=int(devices)).metrics
    assert {name: metrics[name] for name in EXPECTED[key]} == EXPECTED[key]
