"""Tensor lifetime analysis over one training iteration.

Time is counted in *slots*: slot ``i`` is the execution of op ``i``; *boundary* ``i`` is the
instant just before op ``i`` starts. A non-persistent tensor is alive from the slot of its
first use to the slot of its last use; weights and optimizer state are alive always and
their last use of one iteration is followed by their first use of the next, which makes
the schedule a ring of ``N`` slots.

An *idle gap* is the run of slots between two consecutive uses of a tensor; the slots
``after + 1 .. before - 1`` (``before`` may exceed ``N - 1`` for the gap that wraps into the
next iteration). Every policy that moves data between tiers does it inside such gaps.
"""

from dataclasses import dataclass
from math import ceil
from typing import NamedTuple

import numpy as np


__all__ = ["Gap", "GapArrays", "WorkingSet", "Lifetimes"]


@dataclass(frozen=True)
class Gap:
    tensor: int        # tensor index
    after: int         # slot of the use that opens the gap (0 .. N-1)
    before: int        # slot of the next use (after < before, may be >= N)


class GapArrays(NamedTuple):
    """The idle gaps as arrays, one entry per :class:`Gap` in order: the first idle slot
    (``after + 1``), the slot of the next use, the tensor's pages, and whether the tensor
    is ever written (a gap of a tensor never written drops its pages: flash has them)."""

    lo: np.ndarray
    hi: np.ndarray
    pages: np.ndarray
    dirty: np.ndarray


class WorkingSet(NamedTuple):
    pages: int          # pages an op reads and writes, each tensor once
    op: str             # the op's name


class Lifetimes:
    """Per-tensor page counts, uses, births, deaths, idle gaps and the all-resident
    occupancy of every slot, for one graph and one migration page size."""

    def __init__(self, graph, page_bytes):
        self.graph = graph
        self.page_bytes = page_bytes
        self.n_ops = n = len(graph.ops)
        if n == 0:
            raise ValueError(f"{graph.name}: the iteration has no ops")
        self.tensor_ids = list(graph.tensors)
        self.index = {tensor_id: k for k, tensor_id in enumerate(self.tensor_ids)}
        tensors = [graph.tensors[tensor_id] for tensor_id in self.tensor_ids]
        self.pages = np.array([ceil(t.bytes / page_bytes) for t in tensors], dtype=np.int64)
        self.persistent = np.array([t.persistent for t in tensors], dtype=bool)

        self.working_set = []          # per op: tensor indices it reads or writes
        self.writes = []               # per op: tensor indices it writes
        self.uses = [[] for _ in tensors]
        for slot, op in enumerate(graph.ops):
            working = tuple(dict.fromkeys(self.index[t] for t in (*op.inputs, *op.outputs)))
            self.working_set.append(working)
            self.writes.append(tuple(dict.fromkeys(self.index[t] for t in op.outputs)))
            for k in working:
                self.uses[k].append(slot)
        self.used = np.array([bool(u) for u in self.uses])
        self.written_ever = np.zeros(len(tensors), dtype=bool)
        for writes in self.writes:
            self.written_ever[list(writes)] = True

        self.born_at = [[] for _ in range(n)]
        self.dies_after = [[] for _ in range(n)]
        delta = np.zeros(n + 1, dtype=np.int64)
        for k, uses in enumerate(self.uses):
            if not uses:
                continue          # never touched: lives nowhere, costs nothing
            if self.persistent[k]:
                delta[0] += self.pages[k]
                delta[n] -= self.pages[k]
            else:
                first, last = uses[0], uses[-1]
                self.born_at[first].append(k)
                self.dies_after[last].append(k)
                delta[first] += self.pages[k]
                delta[last + 1] -= self.pages[k]
        self.base_occupancy = np.cumsum(delta[:n])
        self.working_set_pages = np.array([int(self.pages[list(w)].sum()) if w else 0
                                           for w in self.working_set], dtype=np.int64)

        self.gaps = []
        for k, uses in enumerate(self.uses):
            for a, b in zip(uses, uses[1:]):
                if b - a >= 2:
                    self.gaps.append(Gap(k, a, b))
            if self.persistent[k] and uses:
                wrap_before = uses[0] + n
                if wrap_before - uses[-1] >= 2:
                    self.gaps.append(Gap(k, uses[-1], wrap_before))

    def gap_arrays(self):
        """The idle gaps as :class:`GapArrays`."""
        gaps = self.gaps
        tensors = np.array([g.tensor for g in gaps], dtype=np.int64)
        return GapArrays(np.array([g.after + 1 for g in gaps], dtype=np.int64),
                         np.array([g.before for g in gaps], dtype=np.int64),
                         self.pages[tensors].astype(np.int64) if len(gaps) else np.zeros(0, np.int64),
                         self.written_ever[tensors] if len(gaps) else np.zeros(0, bool))

    @property
    def footprint_pages(self):
        return int(self.base_occupancy.max())

    @property
    def footprint_bytes(self):
        return self.footprint_pages * self.page_bytes

    def largest_working_set(self):
        """The :class:`WorkingSet` of the op whose reads and writes need the most HBM."""
        slot = int(np.argmax(self.working_set_pages))
        return WorkingSet(int(self.working_set_pages[slot]), self.graph.ops[slot].name)
