"""Run a policy over repeated iterations of one graph and report the last one."""

from dataclasses import dataclass

import numpy as np

from ..gpu import get_preset
from .config import TierConfig
from .costs import TransferCosts
from .lifetime import Lifetimes
from .metrics import iteration_metrics, time_breakdown
from .policies import POLICIES, PlanningContext, TierPolicy, tier_policy
from .trace_check import check_trace


__all__ = ["POLICIES", "TierRun", "simulate", "capacity_pages_for"]


@dataclass
class TierRun:
    """A tiering simulation: the policy, the steady-state ``metrics`` (the last iteration),
    a record and the plan of every simulated iteration, the HBM capacity in pages, the
    tensor lifetimes, and the trace totals and event log when the run was checked."""

    policy: str
    metrics: dict
    records: list           # IterationRecord per iteration
    plans: list             # plan used in each iteration (None for plan-less policies)
    capacity_pages: int
    lifetimes: Lifetimes
    trace_totals: dict | None
    log: list | None = None     # every TraceEvent of the run (with ``check``)


def _policy(policy):
    return policy if isinstance(policy, TierPolicy) else tier_policy(policy)


def capacity_pages_for(lifetimes, tier, policy):
    """HBM pages ``policy`` (a name or a policy) runs with on ``tier``."""
    return _policy(policy).capacity_pages(lifetimes, tier)


def simulate(graph, op_times, tier, flash_config, policy, *, gpu="a100", iterations=3,
             check=True):
    """Run ``policy`` (a registered name or a :class:`~host.tier.policies.TierPolicy`) on
    ``graph`` (op ``i`` computing for ``op_times[i]`` seconds) with the tiers of ``tier``
    and ``flash_config``, for at least ``iterations`` iterations, and return a
    :class:`TierRun` whose metrics describe the last, steady one.

    ``gpu`` (a preset or its name) supplies the TDP for the energy. With ``check`` every
    plan goes through :func:`check_plan` and the whole event log through
    :func:`check_trace`; a violation raises."""
    policy = _policy(policy)
    gpu = get_preset(gpu) if isinstance(gpu, str) else gpu
    if iterations < 1:
        raise ValueError("iterations must be >= 1")
    if not isinstance(tier, TierConfig):
        raise TypeError("tier must be a TierConfig")
    op_times = np.asarray(op_times, dtype=float)
    if op_times.shape != (len(graph.ops),) or (op_times < 0).any():
        raise ValueError(f"need {len(graph.ops)} non-negative op times, got shape {op_times.shape}")
    lifetimes = Lifetimes(graph, tier.page_bytes)
    capacity = policy.capacity_pages(lifetimes, tier)
    context = PlanningContext(lifetimes, op_times, capacity, TransferCosts.of(tier, flash_config),
                              check, tier, flash_config)
    plan = policy.first_plan(context)
    executor = policy.executor(lifetimes, op_times, capacity, tier, flash_config,
                               initial_resident=policy.initial_residency(context, plan),
                               log=check)
    records, plans = [], []
    limit = policy.iteration_limit(iterations)
    while len(records) < limit:
        changed = bool(plans) and plan != plans[-1]
        plans.append(plan)
        record = executor.run_iteration(plan, reconcile=changed and plan.strict)
        records.append(record)
        plan = policy.next_plan(plan, record, warm_up=len(records) == 1)
        # Report a steady iteration: its plan ran in the iteration before it too, and stays.
        steady = plan == plans[-1] and (len(plans) < 2 or plans[-2] == plans[-1])
        if len(records) >= iterations and steady:
            break
    totals = check_trace(executor.log, lifetimes, capacity, tier.host_pages) if check else None
    metrics = iteration_metrics(records[-1], graph=graph, lifetimes=lifetimes, tier=tier,
                                flash_config=flash_config, capacity_pages=capacity,
                                gpu=gpu, uses_flash=policy.uses_flash)
    metrics["policy"] = policy.name
    metrics["ideal_iteration_s"] = float(op_times.sum())
    metrics["plan_changes"] = sum(1 for a, b in zip(plans, plans[1:]) if a != b)
    metrics.update(policy.run_metrics())
    if executor.log is not None:
        metrics["time_breakdown_s"] = time_breakdown(executor.log, records[-1], op_times)
    if plan is not None:
        ratios = plan.split_ratios(lifetimes.pages)
        metrics["plan_chunks"] = len(plan.chunks)
        metrics["split_chunks"] = sum(1 for r in ratios if r < 1)
        metrics["planned_stall_s"] = float(sum(plan.planned_stall_s)) if plan.planned_stall_s else 0.0
    return TierRun(policy.name, metrics, records, plans, capacity, lifetimes, totals,
                   executor.log)
