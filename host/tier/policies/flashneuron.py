"""FlashNeuron (Bae et al., FAST 2021) as G10's artifact runs it: forward activations
offloaded to flash by direct I/O, everything else kept in GPU memory.

Selection, as G10's ``scheduling_offload_flashneuron``: GPU memory less the weights and
the largest op's tensors is the room for activations (none: FlashNeuron cannot run). The
activations made in the forward pass and used again after it (by the loss and the
backward pass) are offloaded in the order the forward pass first uses them, until what is
left of them fits that room; if all are offloaded and they still do not fit, FlashNeuron
cannot run either (G10 reports this for ViT at batch 1 280 and Inception-v3 at 1 536).

Timing, as G10's FlashNeuron simulator: the runtime of :mod:`host.tier.gds` (whole
tensors through first-come first-served flash queues, GPU memory as one flat range of
addresses, a barrier before the loss, backward prefetches as room allows). Host memory is
not used.
"""

from ..gds import GDSExecutor
from ..plan import Chunk, InfeasibleError, Plan
from .base import TierPolicy
from .registry import register_policy


__all__ = ["FlashNeuronPolicy", "plan_flashneuron", "flashneuron_offloads"]


def _loss_slot(lifetimes):
    """The first op after the forward pass (G10's ``makeLoss``); None without one."""
    for slot, op in enumerate(lifetimes.graph.ops):
        if op.phase != "forward":
            return slot
    return None


def _size(pages, page_bytes):
    nbytes = pages * page_bytes
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{pages} pages"


def flashneuron_offloads(lifetimes, capacity_pages):
    """The gaps (one per offloaded activation: from its last forward use to its first use
    after the forward pass) FlashNeuron offloads, in forward order; raises
    :class:`InfeasibleError` when the rest does not fit."""
    page = lifetimes.page_bytes
    used = lifetimes.used
    weights = int(lifetimes.pages[lifetimes.persistent & used].sum())
    largest = lifetimes.largest_working_set()
    room = int(capacity_pages) - weights - largest.pages
    if room <= 0:
        raise InfeasibleError(
            f"FlashNeuron keeps the weights ({_size(weights, page)}) and room for the "
            f"largest op's tensors ({_size(largest.pages, page)}, {largest.op!r}) in GPU "
            f"memory: not less than its {_size(capacity_pages, page)}")
    loss = _loss_slot(lifetimes)
    if loss is None:
        return []
    order, seen = [], set()
    for slot in range(loss):
        for tensor in lifetimes.working_set[slot]:
            uses = lifetimes.uses[tensor]
            if tensor in seen or lifetimes.persistent[tensor] or uses[-1] < loss:
                continue
            seen.add(tensor)
            order.append(tensor)
    remaining = int(sum(int(lifetimes.pages[t]) for t in order))
    spanning = {}
    for gap in lifetimes.gaps:
        if gap.after < loss <= gap.before and not lifetimes.persistent[gap.tensor]:
            spanning[gap.tensor] = gap
    chosen = []
    for tensor in order:
        if remaining < room:
            break
        gap = spanning.get(tensor)
        if gap is None:
            continue                  # used right up to the loss: nothing to hide
        chosen.append(gap)
        remaining -= int(lifetimes.pages[tensor])
    if remaining > room:
        raise InfeasibleError(
            f"FlashNeuron: {_size(remaining, page)} of forward activations it cannot "
            f"offload stay in GPU memory, which has {_size(room, page)} for them beside "
            f"the weights and the largest op's tensors")
    return chosen


def plan_flashneuron(lifetimes, capacity_pages):
    """FlashNeuron's plan: each offloaded activation written to flash right after its last
    forward use (a chunk per activation; when it comes back is decided at run time, as
    room allows), and the barrier before the loss."""
    n = lifetimes.n_ops
    gaps = flashneuron_offloads(lifetimes, capacity_pages)
    loss = _loss_slot(lifetimes)
    chunks = tuple(Chunk(g.tensor, int(lifetimes.pages[g.tensor]), g.after, g.after + 1,
                         g.after + 1, g.before, g.before, destination="flash")
                   for g in sorted(gaps, key=lambda g: (g.after, g.tensor)))
    return Plan("flashneuron", n, int(capacity_pages), chunks, strict=False,
                sync_at=() if loss is None else (loss,))


@register_policy
class FlashNeuronPolicy(TierPolicy):
    """FlashNeuron: forward activations to flash, the rest pinned in GPU memory."""

    name = "flashneuron"

    def plan(self, context):
        return plan_flashneuron(context.lifetimes, context.capacity_pages)

    def executor(self, lifetimes, op_times, capacity_pages, tier, flash_config, *,
                 initial_resident, log):
        return GDSExecutor(lifetimes, op_times, capacity_pages, tier, flash_config,
                           initial_resident=initial_resident, log=log)
