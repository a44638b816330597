"""A placement plan: which part of which tensor leaves HBM in which idle gap, and when it
is brought back. Plans are pure data, compared for equality to show static reuse."""

from dataclasses import dataclass, field

import numpy as np


__all__ = ["Chunk", "Plan", "PlanError", "InfeasibleError", "ring_add", "ring_values"]


class PlanError(ValueError):
    """A plan breaks an invariant (capacity, residency at use, or byte conservation)."""


class InfeasibleError(ValueError):
    """A policy cannot run this workload on this machine; the message says why (as G10
    reports that FlashNeuron cannot train ViT or Inception-v3 in 40 GB)."""


@dataclass(frozen=True)
class Chunk:
    """``pages`` of tensor ``tensor`` leave HBM in the gap opened by the use at slot
    ``gap_after`` and are back before the next use at boundary ``fetch_due``.

    Boundaries are absolute slot numbers of the ring (they may exceed N - 1 for the gap
    that wraps into the next iteration): the write-out is issued at ``evict_at`` and must
    be finished by ``evict_due``; the space is free from ``evict_due`` until ``fetch_at``,
    where the prefetch is issued (and its space allocated); ``fetch_at == fetch_due`` is a
    just-in-time fetch that the op waits for."""

    tensor: int
    pages: int
    gap_after: int
    evict_at: int
    evict_due: int
    fetch_at: int
    fetch_due: int
    # Where the pages go with a host-DRAM tier: "host", "flash", or None for host DRAM
    # while it has room (the executor's default).
    destination: str | None = None

    @property
    def freed(self):
        return self.evict_due, self.fetch_at


@dataclass(frozen=True)
class Plan:
    """A placement policy's plan for one iteration: the write-outs and prefetches (chunks) it
    issues at op boundaries, for ``capacity_pages`` of HBM; ``strict`` when the plan alone
    keeps HBM within capacity."""

    policy: str
    n_slots: int
    capacity_pages: int
    chunks: tuple
    # strict: the plan itself keeps HBM within capacity (check_plan with capacity passes);
    # a new strict plan takes over from the residency it expects (Executor.reconcile).
    strict: bool
    planned_stall_s: tuple = field(default=())
    # Boundaries at which the GPU waits until every write-out in flight has finished
    # (FlashNeuron's barrier before the backward pass).
    sync_at: tuple = field(default=())

    def initial_absent(self, n_tensors):
        """Pages of each tensor that are out of HBM at iteration start in the steady state:
        chunks whose prefetch is issued only in the next iteration's part of the ring."""
        absent = np.zeros(n_tensors, dtype=np.int64)
        for chunk in self.chunks:
            if chunk.fetch_at >= self.n_slots:
                absent[chunk.tensor] += chunk.pages
        return absent

    def split_ratios(self, pages):
        """Fraction of each tensor's pages that streams from flash, per chunk."""
        return [chunk.pages / int(pages[chunk.tensor]) for chunk in self.chunks]


def ring_values(array, start, stop):
    """array[start:stop] on a ring of len(array) (start < stop, stop - start <= len)."""
    n = len(array)
    if stop <= start:
        return array[:0]
    index = np.arange(start, stop) % n
    return array[index]


def ring_add(array, start, stop, value):
    n = len(array)
    if stop <= start:
        return
    if stop - start > n:
        raise PlanError(f"window [{start}, {stop}) is longer than the ring of {n} slots")
    a, b = start % n, stop % n
    if a < b or b == 0:
        array[a:(b or n)] += value
    else:
        array[a:] += value
        array[:b] += value
