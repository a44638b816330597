"""Benchmark: planning and simulation time of every tiering policy on the zoo models."""

import time

from .config import TierConfig
from .costs import TransferCosts
from .flash import flash_preset
from .lifetime import Lifetimes
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
                                      costs, check=False)
            started = time.perf_counter()
            planned = planner.plan(context)
            plan_s = None if planned is None else time.perf_counter() - started
            started = time.perf_counter()
            run = simulate(graph, times, tier, flash, policy, iterations=3, check=False)
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
