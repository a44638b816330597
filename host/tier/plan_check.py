"""Static check of a plan in slot space: capacity at every slot, every use served from HBM,
no tensor evicted beyond its size. Recomputed from the chunk list alone, independently of
the planner's bookkeeping."""

from bisect import bisect_right

import numpy as np

from .plan import PlanError, ring_add


__all__ = ["check_plan"]


def check_plan(plan, lifetimes, *, require_capacity=True):
    """Raise :class:`PlanError` naming the first violation; return the planned occupancy
    (pages per slot). ``require_capacity=False`` checks structure only (for plans that
    rely on demand eviction at run time, as G10's)."""
    n = lifetimes.n_ops
    if plan.n_slots != n:
        raise PlanError(f"plan is for {plan.n_slots} slots, the graph has {n}")
    occupancy = lifetimes.base_occupancy.astype(np.int64).copy()
    out_of_hbm = {}
    for number, chunk in enumerate(plan.chunks):
        name = lifetimes.tensor_ids[chunk.tensor]
        where = f"chunk {number} ({name})"
        size = int(lifetimes.pages[chunk.tensor])
        if not 0 < chunk.pages <= size:
            raise PlanError(f"{where}: {chunk.pages} pages of a {size}-page tensor")
        if not (chunk.gap_after < chunk.evict_at <= chunk.evict_due < chunk.fetch_at <= chunk.fetch_due):
            raise PlanError(f"{where}: boundaries out of order "
                            f"{chunk.gap_after} < {chunk.evict_at} <= {chunk.evict_due} < "
                            f"{chunk.fetch_at} <= {chunk.fetch_due}")
        if chunk.fetch_due - chunk.gap_after > n:
            raise PlanError(f"{where}: spans more than one iteration")
        uses = lifetimes.uses[chunk.tensor]
        if chunk.gap_after % n not in uses:
            raise PlanError(f"{where}: the gap does not start at a use of the tensor")
        # Every access served from HBM: the chunk is back by the tensor's very next use.
        following = bisect_right(uses, chunk.gap_after % n)
        next_use = uses[following] if following < len(uses) else uses[0] + n
        next_use += chunk.gap_after - chunk.gap_after % n
        if chunk.fetch_due != next_use:
            op = lifetimes.graph.ops[next_use % n].name
            raise PlanError(f"{where}: op {op!r} uses the tensor while part of it is out of HBM")
        if not lifetimes.persistent[chunk.tensor] and chunk.fetch_due >= n:
            raise PlanError(f"{where}: a non-persistent tensor cannot wrap into the next iteration")
        ring_add(occupancy, chunk.evict_due, chunk.fetch_at, -chunk.pages)
        out = out_of_hbm.setdefault(chunk.tensor, np.zeros(n, dtype=np.int64))
        ring_add(out, chunk.evict_at, chunk.fetch_due, chunk.pages)
    for tensor, out in out_of_hbm.items():
        size = int(lifetimes.pages[tensor])
        if out.max() > size:
            slot = int(np.argmax(out))
            raise PlanError(f"{lifetimes.tensor_ids[tensor]}: {int(out.max())} pages out of HBM "
                            f"at slot {slot}, but it has only {size} (bytes not conserved)")
    if require_capacity and occupancy.max() > plan.capacity_pages:
        slot = int(np.argmax(occupancy))
        raise PlanError(f"capacity exceeded at op {lifetimes.graph.ops[slot].name!r}: "
                        f"{int(occupancy[slot])} pages planned in HBM, capacity {plan.capacity_pages}")
    return occupancy
