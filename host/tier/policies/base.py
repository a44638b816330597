"""The interface every tier placement policy implements.

A policy is one object per simulated run (it may keep state between iterations, as the
TM timing monitor does). :func:`~host.tier.simulate.simulate` asks it, in this order, for
the HBM capacity it runs with, the plan of the first iteration, the residency of weights
and optimizer state when the run starts, and after every iteration for the plan of the
next one. The executor does the rest the same way for every policy: planned transfers
where the plan has them, demand paging where HBM is short anyway.

Implementations register under their name (:mod:`host.tier.policies.registry`); a new
policy is one module with one class.
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..executor import Executor
from ..flash import FlashDevice
from ..plan import InfeasibleError
from ..plan_check import check_plan


__all__ = ["PlanningContext", "TierPolicy", "InfeasibleError", "greedy_residency"]


@dataclass(frozen=True)
class PlanningContext:
    """What a policy plans from: the iteration's lifetimes, the profiled op times, the
    HBM capacity in pages, the planners' transfer cost estimates, and whether plans are
    checked as they are made."""

    lifetimes: object
    op_times: np.ndarray
    capacity_pages: int
    costs: object
    check: bool = True
    tier: object = None           # the TierConfig and FlashConfig of the run, for planners
    flash: object = None          # that rate the host-DRAM and flash paths apart


def greedy_residency(lifetimes, capacity_pages):
    """Weights and optimizer state fill HBM in order of first use until it is full."""
    resident = np.zeros(len(lifetimes.tensor_ids), dtype=np.int64)
    free = capacity_pages
    persistent = [k for k in range(len(resident)) if lifetimes.persistent[k] and lifetimes.uses[k]]
    for k in sorted(persistent, key=lambda k: lifetimes.uses[k][0]):
        take = min(int(lifetimes.pages[k]), free)
        resident[k] = take
        free -= take
    return resident


class TierPolicy:
    """A placement policy: by default demand paging alone, on HBM of the configured size.

    ``name`` is the registered name; ``uses_flash`` says whether the policy has a flash
    tier at all (its memory cost counts the flash copy of the footprint)."""

    name: ClassVar[str]
    uses_flash: ClassVar[bool] = True

    def capacity_pages(self, lifetimes, tier):
        """HBM pages the run has; refused when below the largest op's working set."""
        footprint = lifetimes.footprint_bytes
        capacity = tier.capacity_bytes(footprint) // lifetimes.page_bytes
        largest = lifetimes.largest_working_set()
        if capacity < largest.pages:
            page = lifetimes.page_bytes
            raise ValueError(
                f"HBM capacity {capacity * page / 2**20:.1f} MiB is below the largest "
                f"single op's working set: {largest.op!r} needs "
                f"{largest.pages * page / 2**20:.1f} MiB (footprint {footprint / 2**20:.1f} MiB)")
        return int(capacity)

    def plan(self, context):
        """A placement plan for the iteration, or None for a policy without one."""
        return None

    def first_plan(self, context):
        """The plan of the first iteration, checked when ``context.check`` (a plan that
        is not ``strict`` leaves capacity to demand paging, so only its structure is)."""
        plan = self.plan(context)
        if plan is not None and context.check:
            check_plan(plan, context.lifetimes, require_capacity=plan.strict)
        return plan

    def initial_residency(self, context, plan):
        """Pages of every tensor in HBM when the run starts."""
        return greedy_residency(context.lifetimes, context.capacity_pages)

    def executor(self, lifetimes, op_times, capacity_pages, tier, flash_config, *,
                 initial_resident, log):
        """The executor that runs the iterations: the planned-transfer executor with
        demand paging as its fallback (:class:`~host.tier.executor.Executor`)."""
        return Executor(lifetimes, op_times, capacity_pages, tier, FlashDevice(flash_config),
                        initial_resident=initial_resident, log=log)

    def iteration_limit(self, iterations):
        """Most iterations to simulate when at least ``iterations`` are asked for."""
        return iterations

    def next_plan(self, plan, record, *, warm_up):
        """The plan of the next iteration, given the one that ran and its record."""
        return plan

    def run_metrics(self):
        """Metrics of the policy's own choices, added to the run's (none by default)."""
        return {}
