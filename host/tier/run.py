"""Tiering runs: on zoo models (build the graph, time its ops on a GPU preset, simulate)
and on any workload under a full setup (:func:`run_tier`, the entry point of sweeps)."""

from functools import lru_cache

import numpy as np

from ..gpu import get_preset, op_time_s
from ..zoo import build_model
from .config import TierConfig
from .flash import flash_preset
from .plan import InfeasibleError
from .policies import tier_policy
from .presets import TierSetup, setup_from_dict
from .simulate import simulate


__all__ = ["model_graph_and_times", "run_model", "sweep", "run_tier", "op_times"]


@lru_cache(maxsize=8)
def model_graph_and_times(model, batch, gpu_name, dtype="fp32", seq_len=None):
    graph = build_model(model, batch=batch, dtype=dtype, seq_len=seq_len)
    gpu = get_preset(gpu_name)
    times = np.array([op_time_s(graph, op, gpu) for op in graph.ops])
    return graph, times


def op_times(graph, gpu_name):
    """Every op's time: its measured duration if it carries one, else the GPU model's."""
    gpu = get_preset(gpu_name)
    return np.array([op_time_s(graph, op, gpu) for op in graph.ops])


def run_tier(config, workload, *, check=True):
    """Simulate ``workload`` under ``config`` and return the metrics as plain data.

    ``config`` is a :class:`~host.tier.presets.TierSetup` or its plain-data form (a dict
    with ``preset`` and sections ``tier``, ``flash``, ``run``; ``run.policy`` names the
    policy); ``workload`` an :class:`~host.graph.IterationGraph` or a trace specification
    ``FORMAT:PATH`` (:func:`host.workload.read_trace`). The metrics carry the whole
    configuration under ``config`` and the workload's name, batch and size."""
    setup = config if isinstance(config, TierSetup) else setup_from_dict(config)
    if isinstance(workload, str):
        from ..workload import read_trace
        workload = read_trace(workload)
    run = simulate(workload, op_times(workload, setup.gpu), setup.tier, setup.flash,
                   setup.policy, gpu=setup.gpu, iterations=setup.iterations, check=check)
    metrics = dict(run.metrics)
    metrics.update({"workload": workload.name, "batch": workload.batch,
                    "ops": len(workload.ops), "tensors": len(workload.tensors),
                    "config": setup.as_dict()})
    return metrics


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
    setup = TierSetup("zoo", tier, flash_config, gpu_preset.name, iterations,
                      policy if isinstance(policy, str) else policy.name)
    run.metrics.update({"config": setup.as_dict()})
    run.metrics.update({"model": model, "gpu": gpu_preset.name, "batch": batch,
                        "hbm_fraction": hbm_fraction, "flash": flash,
                        "flash_devices": flash_devices, "link_gbs": link_gbs, "dtype": dtype})
    return run


def sweep(models, fractions, policies, *, progress=True, **kwargs):
    """Every (model, fraction, policy); a configuration that cannot run (HBM below an op's
    working set, or a policy that cannot run it, as FlashNeuron when the activations it
    keeps do not fit) is reported with its reason instead of metrics."""
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
            if "working set" not in str(error) and not isinstance(error, InfeasibleError):
                raise
            metrics = {"model": model, "hbm_fraction": fraction, "policy": policy,
                       "infeasible": str(error)}
        rows.append(metrics)
    return rows
