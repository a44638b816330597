"""Benchmarks: planning and simulation time of every tiering policy on the zoo models, and
import + simulation time of a SENet-154-sized G10 trace under G10's setup."""

import time

from .config import TierConfig
from .costs import TransferCosts
from .flash import flash_preset
from .lifetime import Lifetimes
from .plan import InfeasibleError
from .policies import POLICIES, PlanningContext, tier_policy
from .run import model_graph_and_times
from .simulate import simulate


__all__ = ["bench_tiering"]

# (model, batch): GPT-2 small at batch 8 is the reference point (target < 5 s per policy).
FULL = [("gpt2", 8), ("bert-base", 32), ("resnet50", 32), ("vgg16_bn", 32)]
QUICK = [("gpt2", 8)]


def bench_tiering(quick=False, fraction=0.5):
    tier = TierConfig(hbm_fraction=fraction)
    flash = flash_preset("zssd")
    costs = TransferCosts.of(tier, flash)
    results = []
    for model, batch in QUICK if quick else FULL:
        started = time.perf_counter()
        graph, times = model_graph_and_times(model, batch, "a100")
        lifetimes = Lifetimes(graph, tier.page_bytes)
        setup_s = time.perf_counter() - started
        for policy in POLICIES:
            planner = tier_policy(policy)
            context = PlanningContext(lifetimes, times, planner.capacity_pages(lifetimes, tier),
                                      costs, check=False, tier=tier, flash=flash)
            started = time.perf_counter()
            try:
                planned = planner.plan(context)
                plan_s = None if planned is None else time.perf_counter() - started
                started = time.perf_counter()
                run = simulate(graph, times, tier, flash, policy, iterations=3, check=False)
            except InfeasibleError as error:
                results.append({"model": model, "batch": batch, "policy": policy,
                                "hbm_fraction": fraction, "fails": str(error)})
                continue
            simulate_s = time.perf_counter() - started
            results.append({
                "model": model, "batch": batch, "policy": policy, "hbm_fraction": fraction,
                "ops": len(graph.ops), "tensors": len(graph.tensors),
                "iterations_simulated": len(run.records), "graph_and_lifetimes_s": round(setup_s, 4),
                "plan_s": None if plan_s is None else round(plan_s, 4),
                "plan_and_simulate_s": round(simulate_s, 4),
                "inter_tier_bytes": run.metrics["inter_tier_bytes"],
                "iteration_s": run.metrics["iteration_s"]})
    return {"flash": "zssd", "gpu": "a100", "target": "GPT-2 small, batch 8: < 5 s per policy",
            "runs": results}


# G10's largest workload: SENet-154 at batch 1 024 (2 319 kernels, 4 341 tensors).
_SENET = ("SENet154", 1024)


def _senet_trace(directory):
    """G10's SENet-154 trace if a G10 checkout named by $MATNDP_G10 has it (with the
    kernels.config its front end writes), else a synthetic trace of the same size."""
    import os
    from pathlib import Path

    from ..workload.synthetic import write_synthetic_g10
    checkout = os.environ.get("MATNDP_G10")
    if checkout:
        model, batch = _SENET
        found = sorted(Path(checkout, "results", model).glob(f"{batch}-*/statistics/kernels.config"))
        times = Path(checkout, "results", model, f"cudnn{batch}.txt")
        if found and times.is_file():
            return {"kernels": found[0], "times": times, "batch": batch}, "G10 SENet154 1024"
    path = write_synthetic_g10(Path(directory) / "senet154-sized")
    return {"kernels": path / "kernels.config", "times": path / f"cudnn{_SENET[1]}.txt"}, \
        "synthetic, SENet154-sized"


def bench_tier_traces(quick=False):
    """Import + simulate time of a SENet-154-sized G10 trace under G10's setup, per policy
    (targets: < 10 s for ideal, g10 and tm; < 2 min for page-granular lru)."""
    import tempfile

    from ..workload import read_g10
    from .presets import apply_overrides, setup_preset
    from .run import run_tier

    results = []
    with tempfile.TemporaryDirectory() as scratch:
        files, source = _senet_trace(scratch)
        for policy in POLICIES:
            started = time.perf_counter()
            graph = read_g10(scratch, **files)
            imported = time.perf_counter() - started
            setup = apply_overrides(setup_preset("g10"), [f'run.policy="{policy}"'])
            try:
                metrics = run_tier(setup, graph, check=False)
            except InfeasibleError as error:
                results.append({"workload": source, "policy": policy, "fails": str(error)})
                continue
            total = time.perf_counter() - started
            results.append({
                "workload": source, "policy": policy, "kernels": len(graph.ops),
                "tensors": len(graph.tensors), "import_s": round(imported, 3),
                "import_and_simulate_s": round(total, 3),
                "iterations_simulated": setup.iterations,
                "footprint_bytes": metrics["footprint_bytes"],
                "inter_tier_bytes": metrics["inter_tier_bytes"],
                "faults": metrics["faults"], "fault_batches": metrics["fault_batches"],
                "iteration_s": metrics["iteration_s"],
                "ideal_iteration_s": metrics["ideal_iteration_s"]})
    return {"preset": "g10", "target": "< 10 s each for ideal, g10, tm; < 120 s for lru",
            "runs": results}
