"""Tiering runs on zoo models: build the graph, time its ops on a GPU preset, simulate."""

from functools import lru_cache

import numpy as np

from ..gpu import get_preset, op_time_s
from ..zoo import build_model
from .config import TierConfig
from .flash import flash_preset
from .policies import tier_policy
from .simulate import simulate


__all__ = ["model_graph_and_times", "run_model", "sweep"]


@lru_cache(maxsize=8)
def model_graph_and_times(model, batch, gpu_name, dtype="fp32", seq_len=None):
    graph = build_model(model, batch=batch, dtype=dtype, seq_len=seq_len)
    gpu = get_preset(gpu_name)
    times = np.array([op_time_s(graph, op, gpu) for op in graph.ops])
    return graph, times


def run_model(model, *, policy, gpu="a100", batch=8, hbm_fraction=None, hbm_bytes=None,
              flash="zssd", flash_devices=1, link_gbs=31.5, dtype="fp32", seq_len=None,
              iterations=3, check=True):
    """Simulate zoo model ``model`` on GPU preset ``gpu`` with HBM of ``hbm_fraction`` of
    its footprint (or ``hbm_bytes``) over ``flash`` under the placement ``policy``; returns
    the :class:`~matndp.host.tier.simulate.TierRun`, whose ``metrics`` are per iteration in
    steady state."""
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    if hbm_fraction is None and hbm_bytes is None:
        raise ValueError("give an HBM fraction or an HBM size")
    size = {"hbm_fraction": hbm_fraction} if hbm_bytes is None else {"hbm_bytes": hbm_bytes}
    tier = TierConfig(**size, link_bytes_per_s=link_gbs * 1e9)
    flash_config = flash_preset(flash, devices=flash_devices)
    gpu_preset = get_preset(gpu)
    graph, times = model_graph_and_times(model, batch, gpu_preset.name, dtype, seq_len)
    run = simulate(graph, times, tier, flash_config, policy, gpu=gpu_preset,
                   iterations=iterations, check=check)
    run.metrics.update({"model": model, "gpu": gpu_preset.name, "batch": batch,
                        "hbm_fraction": hbm_fraction, "flash": flash,
                        "flash_devices": flash_devices, "link_gbs": link_gbs, "dtype": dtype})
    return run


def sweep(models, fractions, policies, *, progress=True, **kwargs):
    """Every (model, fraction, policy); a configuration that cannot run (HBM below an op's
    working set) is reported with its reason instead of metrics."""
    for policy in policies:
        tier_policy(policy)              # refuses an unknown name before anything runs
    for fraction in fractions:
        if not fraction > 0:
            raise ValueError(f"HBM fraction must be > 0, got {fraction}")
    jobs = [(m, f, p) for m in models for f in fractions for p in policies]
    if progress:
        from tqdm import tqdm
        jobs = tqdm(jobs, desc="tier sweep", unit="run")
    rows = []
    for model, fraction, policy in jobs:
        try:
            metrics = run_model(model, policy=policy, hbm_fraction=fraction, **kwargs).metrics
        except ValueError as error:
            if "working set" not in str(error):
                raise
            metrics = {"model": model, "hbm_fraction": fraction, "policy": policy,
                       "infeasible": str(error)}
        rows.append(metrics)
    return rows
