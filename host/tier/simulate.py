"""Run a policy over repeated iterations of one graph and report the last one."""

from dataclasses import dataclass

import numpy as np

from ..gpu import get_preset
from .config import TierConfig
from .costs import TransferCosts
from .executor import Executor
from .flash import FlashDevice
from .lifetime import Lifetimes
from .metrics import iteration_metrics
from .plan_check import check_plan
from .policies.g10 import plan_g10
from .policies.tm import TimingMonitor, TMConfig, plan_tm
from .trace_check import check_trace


__all__ = ["POLICIES", "TierRun", "simulate"]


POLICIES = ("ideal", "lru", "g10", "tm")


@dataclass
class TierRun:
    policy: str
    metrics: dict
    records: list           # IterationRecord per iteration
    plans: list             # plan used in each iteration (None for plan-less policies)
    capacity_pages: int
    lifetimes: Lifetimes
    trace_totals: dict | None


def _greedy_residency(lifetimes, capacity_pages):
    """Weights and optimizer state fill HBM in order of first use until it is full."""
    resident = np.zeros(len(lifetimes.tensor_ids), dtype=np.int64)
    free = capacity_pages
    persistent = [k for k in range(len(resident)) if lifetimes.persistent[k] and lifetimes.uses[k]]
    for k in sorted(persistent, key=lambda k: lifetimes.uses[k][0]):
        take = min(int(lifetimes.pages[k]), free)
        resident[k] = take
        free -= take
    return resident


def capacity_pages_for(lifetimes, tier, policy):
    footprint = lifetimes.footprint_bytes
    if policy == "ideal":
        return lifetimes.footprint_pages
    capacity = tier.capacity_bytes(footprint) // lifetimes.page_bytes
    needed, op_name = lifetimes.largest_working_set()
    if capacity < needed:
        raise ValueError(
            f"HBM capacity {capacity * lifetimes.page_bytes / 2**20:.1f} MiB is below the largest "
            f"single op's working set: {op_name!r} needs {needed * lifetimes.page_bytes / 2**20:.1f} MiB "
            f"(footprint {footprint / 2**20:.1f} MiB)")
    return int(capacity)


def simulate(graph, op_times, tier, flash_config, policy, *, gpu="a100", iterations=3,
             check=True, tm_config=TMConfig()):
    """Run ``policy`` on ``graph`` (op ``i`` computing for ``op_times[i]`` seconds) with the
    tiers of ``tier`` and ``flash_config``, for at least ``iterations`` iterations, and
    return a :class:`TierRun` whose metrics describe the last, steady one.

    ``gpu`` (a preset or its name) supplies the TDP for the energy. With ``check`` every
    plan goes through :func:`check_plan` and the whole event log through
    :func:`check_trace`; a violation raises."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; known: {', '.join(POLICIES)}")
    gpu = get_preset(gpu) if isinstance(gpu, str) else gpu
    if iterations < 1:
        raise ValueError("iterations must be >= 1")
    if not isinstance(tier, TierConfig):
        raise TypeError("tier must be a TierConfig")
    op_times = np.asarray(op_times, dtype=float)
    if op_times.shape != (len(graph.ops),) or (op_times < 0).any():
        raise ValueError(f"need {len(graph.ops)} non-negative op times, got shape {op_times.shape}")
    lifetimes = Lifetimes(graph, tier.page_bytes)
    capacity = capacity_pages_for(lifetimes, tier, policy)
    costs = TransferCosts.of(tier, flash_config)
    device = FlashDevice(flash_config)

    plan = None
    if policy == "g10":
        plan = plan_g10(lifetimes, op_times, capacity, costs)
        if check:
            check_plan(plan, lifetimes, require_capacity=False)
    elif policy == "tm":
        plan = plan_tm(lifetimes, op_times, capacity, costs)
        if check:
            check_plan(plan, lifetimes)

    if policy == "tm":
        initial = lifetimes.pages - plan.initial_absent(len(lifetimes.tensor_ids))
    elif policy == "ideal":
        initial = lifetimes.pages.copy()
    else:
        initial = _greedy_residency(lifetimes, capacity)
    executor = Executor(lifetimes, op_times, capacity, tier, device, initial_resident=initial,
                        log=check)
    records, plans = [], []
    monitor = (TimingMonitor(lifetimes, op_times, capacity, costs, tm_config, check=check)
               if policy == "tm" else None)
    limit = iterations + (2 * tm_config.max_adjustments + 1 if monitor else 0)
    while len(records) < limit:
        changed = bool(plans) and plan != plans[-1]
        plans.append(plan)
        record = executor.run_iteration(plan, reconcile=changed and plan.strict)
        records.append(record)
        if monitor is not None:
            plan = monitor.after_iteration(plan, record, warm_up=len(records) == 1)
        # Report a steady iteration: its plan ran in the iteration before it too, and stays.
        steady = plan == plans[-1] and (len(plans) < 2 or plans[-2] == plans[-1])
        if len(records) >= iterations and steady:
            break
    totals = check_trace(executor.log, lifetimes, capacity) if check else None
    metrics = iteration_metrics(records[-1], graph=graph, lifetimes=lifetimes, tier=tier,
                                flash_config=flash_config, capacity_pages=capacity,
                                gpu=gpu, uses_flash=policy != "ideal")
    metrics["policy"] = policy
    metrics["plan_changes"] = sum(1 for a, b in zip(plans, plans[1:]) if a != b)
    if plan is not None:
        ratios = plan.split_ratios(lifetimes.pages)
        metrics["plan_chunks"] = len(plan.chunks)
        metrics["split_chunks"] = sum(1 for r in ratios if r < 1)
        metrics["planned_stall_s"] = float(sum(plan.planned_stall_s)) if plan.planned_stall_s else 0.0
    return TierRun(policy, metrics, records, plans, capacity, lifetimes, totals)
