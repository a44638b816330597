"""FlashNeuron's runtime: whole tensors moved by GPUDirect storage through first-come
first-served queues, in GPU memory that is one flat range of addresses.

This is the model G10 evaluates FlashNeuron with (its artifact's analytic simulator, read
for its rules): no UVM and no paging. Weights sit at the low end of GPU memory for the
whole run, next to a block as large as the largest tensor that no op reads (workspaces
and other write-only outputs live there). Every other tensor takes a contiguous run of
pages when it is first needed — from the low end, or from the high end if it is an
offloaded activation coming back — and gives it back after its last use. When no run is
long enough the GPU waits for transfers to finish (an offload frees its tensor's run when
written); if none is in flight, the tensor cannot be placed and the run fails (G10's
FlashNeuron fails this way on ViT at batch 1 280: 97 % of GPU memory in use, no run long
enough).

Transfers: an offload (a plan's chunk: the activation, issued at its write-out slot)
joins the write queue, a fetch the read queue; each queue moves one tensor at a time at
flash's bandwidth for that direction (a flash device that is not duplex has one queue for
both). Before the first op after the forward pass the GPU
waits until the write queue is empty. After every op of the backward pass the offloaded
activations needed next are fetched, in the order of the ops that need them, while the
longest free run exceeds the largest op's activations by the tensor's size; one still
missing when its op starts is fetched then, and the op waits for it.
"""

import heapq
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .events import EventKind, TraceEvent
from .executor import IterationRecord, OccupancySample
from .flash import FlashDevice
from .plan import InfeasibleError


__all__ = ["ContiguousMemory", "GDSExecutor", "OutOfMemory"]


class OutOfMemory(InfeasibleError):
    """No contiguous run of GPU memory is long enough for a tensor, and nothing in flight
    will free one."""


class ContiguousMemory:
    """GPU memory as pages ``0 .. pages - 1``; a tensor takes a contiguous run, the first
    long enough from the low end (:meth:`take_low`) or from the high end
    (:meth:`take_high`)."""

    def __init__(self, pages):
        if pages < 1:
            raise ValueError(f"GPU memory of {pages} pages")
        self.pages = int(pages)
        self.free = [(0, self.pages)]          # sorted, disjoint [start, end) runs

    def take_low(self, size):
        for k, (start, end) in enumerate(self.free):
            if end - start >= size:
                self._cut(k, start, start + size)
                return start
        return None

    def take_high(self, size):
        for k in range(len(self.free) - 1, -1, -1):
            start, end = self.free[k]
            if end - start >= size:
                self._cut(k, end - size, end)
                return end - size
        return None

    def _cut(self, k, start, end):
        run_start, run_end = self.free[k]
        pieces = [(run_start, start), (end, run_end)]
        self.free[k:k + 1] = [(a, b) for a, b in pieces if b > a]

    def give_back(self, start, size):
        end = start + size
        runs = self.free
        k = 0
        while k < len(runs) and runs[k][0] < start:
            k += 1
        if k and runs[k - 1][1] == start:
            k -= 1
            start = runs[k][0]
            runs.pop(k)
        if k < len(runs) and runs[k][0] == end:
            end = runs[k][1]
            runs.pop(k)
        runs.insert(k, (start, end))

    def longest(self):
        return max((end - start for start, end in self.free), default=0)

    def in_use(self):
        return self.pages - sum(end - start for start, end in self.free)


@dataclass(order=True)
class _Done:
    time_s: float
    seq: int
    queue: str = field(compare=False)         # the queue whose head finishes: "write" or "read"


class GDSExecutor:
    """Runs iterations of a FlashNeuron plan (see the module's docstring); the interface of
    :class:`~host.tier.executor.Executor` (``run_iteration``, ``log``, ``flash``)."""

    def __init__(self, lifetimes, slot_times, capacity_pages, tier, flash_config, *,
                 initial_resident, log=True):
        self.lt = lifetimes
        self.slot_times = [float(t) for t in slot_times]
        if len(self.slot_times) != lifetimes.n_ops:
            raise ValueError(f"{len(self.slot_times)} op times for {lifetimes.n_ops} ops")
        self.page_bytes = lifetimes.page_bytes
        self.flash = FlashDevice(flash_config)     # for its counters and energies
        page = self.page_bytes
        self.s_per_page = {"write": page / flash_config.program_bytes_per_s,
                           "read": page / flash_config.read_bytes_per_s}
        self.log = [] if log else None
        self.now = 0.0
        self.iteration = 0
        self.size = [int(p) for p in lifetimes.pages]
        n_tensors = len(self.size)
        self.memory = ContiguousMemory(capacity_pages)
        self.where = [None] * n_tensors        # start page of a tensor's run, if placed
        read = np.zeros(n_tensors, dtype=bool)
        for op in lifetimes.graph.ops:
            for name in op.inputs:
                read[lifetimes.index[name]] = True
        # Tensors no op reads share one block, reserved once, as large as the largest.
        self.transient = (~read) & ~lifetimes.persistent & lifetimes.used
        # The largest op's activations: the room a backward prefetch leaves free.
        self.largest_activations = max(
            (sum(self.size[t] for t in w if not lifetimes.persistent[t]) for w in lifetimes.working_set),
            default=0)
        for tensor in np.flatnonzero(lifetimes.persistent & lifetimes.used):
            tensor = int(tensor)
            if initial_resident[tensor] != self.size[tensor]:
                raise ValueError("FlashNeuron keeps every weight in GPU memory")
            if not self._place(tensor, low=True):
                raise OutOfMemory("the weights do not fit in GPU memory")
            self._log(EventKind.INIT, tensor, self.size[tensor], valid=self.size[tensor])
        transient = [self.size[t] for t in np.flatnonzero(self.transient)]
        self.block = max(transient, default=0)
        self.in_block = 0                      # pages of write-only tensors in the block
        self.block_tensors = set()
        if self.block and self.memory.take_low(self.block) is None:
            raise OutOfMemory("no room for the largest write-only tensor beside the weights")
        # (tensor, pages, finish, kind); a device that is not duplex has one queue for both.
        self.queues = {"write": deque()}
        self.queues["read"] = deque() if flash_config.duplex else self.queues["write"]
        self.events = []                       # heap of _Done for the queue heads
        self._seq = 0
        self.fetching = set()
        self.offloaded = set()                 # activations in flash, not yet back

    # ---- bookkeeping -----------------------------------------------------------------
    def _log(self, kind, tensor, pages, **fields):
        if self.log is not None:
            self.log.append(TraceEvent(self.now, kind, tensor, pages, **fields))

    def _place(self, tensor, *, low):
        start = (self.memory.take_low if low else self.memory.take_high)(self.size[tensor])
        if start is None:
            return False
        self.where[tensor] = start
        return True

    def _release(self, tensor):
        self.memory.give_back(self.where[tensor], self.size[tensor])
        self.where[tensor] = None

    # ---- the two queues --------------------------------------------------------------
    def _enqueue(self, kind, tensor):
        pages = self.size[tensor]
        self.queues[kind].append([tensor, pages, None, kind])
        if len(self.queues[kind]) == 1:
            self._start(kind)

    def _start(self, queue):
        head = self.queues[queue][0]
        head[2] = self.now + head[1] * self.s_per_page[head[3]]
        self._seq += 1
        heapq.heappush(self.events, _Done(head[2], self._seq, queue))

    def _serve_one(self):
        """Complete the transfer that finishes first; False if none is in flight."""
        if not self.events:
            return False
        done = heapq.heappop(self.events)
        self.now = max(self.now, done.time_s)
        tensor, pages, _, kind = self.queues[done.queue].popleft()
        nbytes = pages * self.page_bytes
        if kind == "write":
            self.flash.program(nbytes, self.now)
            self._release(tensor)
            self.offloaded.add(tensor)
            self._log(EventKind.EVICT_END, tensor, pages)
        else:
            self.flash.read(nbytes, self.now)
            self.fetching.discard(tensor)
            self.offloaded.discard(tensor)
            self._log(EventKind.FETCH_END, tensor, pages)
        if self.queues[done.queue]:
            self._start(done.queue)
        return True

    def _serve_until(self, until):
        while self.events and self.events[0].time_s <= until:
            self._serve_one()
        self.now = max(self.now, until)

    def _fetch(self, tensor, counters, *, demand):
        self.fetching.add(tensor)
        self._log(EventKind.FETCH_BEGIN, tensor, self.size[tensor])
        counters["from_flash_pages"] += self.size[tensor]
        counters["demand_fetch_pages" if demand else "planned_fetch_pages"] += self.size[tensor]
        self._enqueue("read", tensor)

    def _make_room(self, tensor, *, low, op):
        while not self._place(tensor, low=low):
            if not self._serve_one():
                raise OutOfMemory(
                    f"op {op!r}: no contiguous run of {self.size[tensor]} pages for "
                    f"{self.lt.tensor_ids[tensor]} ({self.memory.in_use()} of "
                    f"{self.memory.pages} pages in use, the longest free run "
                    f"{self.memory.longest()})")

    # ---- one iteration ---------------------------------------------------------------
    def run_iteration(self, plan=None, *, reconcile=False):
        lt = self.lt
        n = lt.n_ops
        offload_at = [[] for _ in range(n)]
        chosen = set()
        if plan is not None:
            for chunk in plan.chunks:
                offload_at[chunk.evict_at % n].append(chunk.tensor)
                chosen.add(chunk.tensor)
        barriers = set(plan.sync_at) if plan is not None else set()
        counters = {"to_flash_pages": 0, "from_flash_pages": 0, "to_host_pages": 0,
                    "from_host_pages": 0, "demand_fetch_pages": 0, "demand_evict_pages": 0,
                    "planned_evict_pages": 0, "planned_fetch_pages": 0,
                    "dropped_clean_pages": 0, "faults": 0, "peak_pages": self.memory.in_use()}
        flash_before = dict(self.flash.stats)
        stall = np.zeros(n)
        start = self.now
        compute = 0.0
        occupancy = [OccupancySample(self.now, self.memory.in_use())]
        backward = False
        for slot in range(n):
            op = lt.graph.ops[slot].name
            began = self.now
            self._serve_until(self.now)
            backward = backward or slot in barriers
            if slot in barriers:
                while self.queues["write"]:
                    self._serve_one()
            for tensor in offload_at[slot]:
                if self.where[tensor] is not None and tensor not in self.fetching:
                    self._log(EventKind.EVICT_BEGIN, tensor, self.size[tensor],
                              dirty=self.size[tensor])
                    counters["to_flash_pages"] += self.size[tensor]
                    counters["planned_evict_pages"] += self.size[tensor]
                    self._enqueue("write", tensor)
            for tensor in lt.working_set[slot]:
                if lt.persistent[tensor]:
                    continue
                if self.transient[tensor]:
                    if slot == lt.uses[tensor][0]:
                        # In the reserved block while it has room (write-only tensors
                        # alive at once beyond it take a run of their own).
                        if self.in_block + self.size[tensor] <= self.block:
                            self.in_block += self.size[tensor]
                            self.block_tensors.add(tensor)
                        else:
                            self._make_room(tensor, low=True, op=op)
                        self._log(EventKind.ALLOC, tensor, self.size[tensor])
                    continue
                if self.where[tensor] is None:
                    back = tensor in self.offloaded
                    self._make_room(tensor, low=not (tensor in chosen), op=op)
                    if back:
                        self._fetch(tensor, counters, demand=True)
                    else:
                        self._log(EventKind.ALLOC, tensor, self.size[tensor])
                while tensor in self.fetching:
                    self._serve_one()
            stall[slot] = self.now - began
            counters["peak_pages"] = max(counters["peak_pages"], self.memory.in_use())
            self._log(EventKind.OP, None, 0, slot=slot)
            occupancy.append(OccupancySample(self.now, self.memory.in_use()))
            self._serve_until(self.now + self.slot_times[slot])
            compute += self.slot_times[slot]
            for tensor in lt.dies_after[slot]:
                if tensor in self.block_tensors:
                    self.block_tensors.discard(tensor)
                    self.in_block -= self.size[tensor]
                    self._log(EventKind.FREE, tensor, self.size[tensor])
                elif self.where[tensor] is not None:
                    self._release(tensor)
                    self._log(EventKind.FREE, tensor, self.size[tensor])
            if backward:
                self._prefetch(slot, chosen, counters)
            occupancy.append(OccupancySample(self.now, self.memory.in_use()))
        record = IterationRecord(
            index=self.iteration, start_s=start, end_s=self.now, compute_s=compute,
            stall_s=float(stall.sum()), stall_by_boundary=stall, counters=counters,
            flash={k: self.flash.stats[k] - flash_before[k] for k in self.flash.stats},
            occupancy=occupancy)
        self.iteration += 1
        return record

    def _prefetch(self, slot, chosen, counters):
        """After a backward op: the offloaded activations needed next, in order, while the
        longest free run exceeds the largest op's activations by their size."""
        lt = self.lt
        rest = self.memory.longest() - self.largest_activations
        for later in range(slot + 1, lt.n_ops):
            for tensor in lt.working_set[later]:
                if tensor not in self.offloaded or tensor in self.fetching:
                    continue
                if rest <= self.size[tensor]:
                    return
                if not self._place(tensor, low=False):
                    return
                self._fetch(tensor, counters, demand=False)
                rest -= self.size[tensor]
