"""Run training iterations over the tiers: the executor of every planning policy.

The GPU runs the ops in order; before op ``i`` starts, every page of every tensor it reads
or writes must be in HBM. A policy acts through a :class:`~host.tier.plan.Plan` (planned
write-outs and prefetches at op boundaries) and, when HBM is short anyway, through demand
paging: a missing page faults (``fault_latency_s`` plus the flash read) and space is made
by evicting least-recently-used pages of tensors the current op does not touch (dirty pages
are written back first). ``lru`` is demand paging alone, ``ideal`` never runs short.

Residency is tracked per tensor as page counts. All pages of a tensor are touched by the
same op, so page-granular LRU never distinguishes them; the executor evicts and refetches
from the tail of the tensor, which also tells which pages have a valid flash copy (the
``clean`` tail): pages written back since the tensor was last written need no write again.

Timing: one link per direction (``link_bytes_per_s``) in series with the flash device
(:class:`~host.tier.flash.FlashDevice`), each with its own queue. A write-out frees its HBM
space when the flash program completes (no write buffer); an allocation that finds HBM
full first waits for write-outs in flight, and only then evicts on demand. A plan that
passed :func:`~host.tier.plan_check.check_plan` therefore never needs demand eviction:
its deadlines only say by when the space is planned to be free. Every state change is
logged for the independent trace check (:mod:`host.tier.trace_check`).

With a host-DRAM tier (``TierConfig.host_bytes`` > 0) the dirty pages of an eviction go to
host DRAM while it has room and to flash after that; a fetch takes a tensor's pages from
host DRAM first and the rest from flash. Pages move: a page in host DRAM is nowhere else
(it has no valid flash copy), and fetching it frees its host space. Transfers to and from
host DRAM cross the GPU's link and host memory; those of flash cross the link and the
device. Without host DRAM every path below is the two-tier one, unchanged.
"""

import heapq
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .events import EventKind, TraceEvent


__all__ = ["Executor", "IterationRecord", "OccupancySample", "CapacityError"]


class CapacityError(ValueError):
    """HBM cannot hold what an op needs at once."""


class OccupancySample(NamedTuple):
    time_s: float
    pages: int          # HBM pages in use


class _Transfer(NamedTuple):
    """A transfer in flight, completing at ``done_s`` (heap order: time, then issue)."""

    done_s: float
    seq: int
    kind: EventKind     # EVICT_END or FETCH_END
    tensor: int
    pages: int
    host: int = 0       # pages of a fetch that come from host DRAM


class _Access(NamedTuple):
    """An LRU heap entry; stale once the tensor is touched again."""

    time_s: float
    seq: int
    tensor: int


@dataclass
class IterationRecord:
    index: int
    start_s: float
    end_s: float
    compute_s: float
    stall_s: float
    stall_by_boundary: np.ndarray
    counters: dict
    flash: dict
    occupancy: list = field(default_factory=list)     # OccupancySample at op boundaries


class Executor:
    def __init__(self, lifetimes, slot_times, capacity_pages, tier, flash_device, *,
                 initial_resident, log=True):
        self.lt = lifetimes
        self.slot_times = [float(t) for t in slot_times]
        if len(self.slot_times) != lifetimes.n_ops:
            raise ValueError(f"{len(self.slot_times)} op times for {lifetimes.n_ops} ops")
        self.capacity = int(capacity_pages)
        self.tier = tier
        self.flash = flash_device
        self.page_bytes = lifetimes.page_bytes
        n_tensors = len(lifetimes.tensor_ids)
        self.size = [int(p) for p in lifetimes.pages]
        self.resident = [0] * n_tensors
        self.inbound = [0] * n_tensors
        self.outbound = [0] * n_tensors
        self.clean = [0] * n_tensors         # tail pages with a valid flash copy
        self.alive = [False] * n_tensors
        self.inbound_done = [0.0] * n_tensors
        self.outbound_done = [0.0] * n_tensors
        self.last_access = [-1.0] * n_tensors
        self.host_capacity = tier.host_pages
        self.host = [0] * n_tensors          # pages held in host DRAM (or on their way there)
        self.inbound_host = [0] * n_tensors  # pages on their way from host DRAM to HBM
        self.host_used = 0
        self.used = 0
        self.now = 0.0
        self.link_free = {"in": 0.0, "out": 0.0}
        self._events = []                     # heap of _Transfer
        self._seq = 0
        self._lru = []                        # heap of _Access, lazy
        self.log = [] if log else None
        self.iteration = 0
        self._boundary_stall = None
        self.counters = self._zero_counters()
        for tensor in np.flatnonzero(lifetimes.persistent & lifetimes.used):
            tensor = int(tensor)
            resident = int(initial_resident[tensor])
            if not 0 <= resident <= self.size[tensor]:
                raise ValueError(f"initial residency of {lifetimes.tensor_ids[tensor]} out of range")
            self.alive[tensor] = True
            self.resident[tensor] = resident
            self.clean[tensor] = self.size[tensor]    # the checkpoint is in flash
            self.used += resident
            self._touch(tensor, -1.0)
            self._log(EventKind.INIT, tensor, resident, valid=self.size[tensor])
        if self.used > self.capacity:
            raise CapacityError(f"initial residency {self.used} pages exceeds HBM of {self.capacity}")

    @staticmethod
    def _zero_counters():
        return {"to_flash_pages": 0, "from_flash_pages": 0, "to_host_pages": 0,
                "from_host_pages": 0, "demand_fetch_pages": 0,
                "demand_evict_pages": 0, "planned_evict_pages": 0, "planned_fetch_pages": 0,
                "dropped_clean_pages": 0, "faults": 0, "peak_pages": 0}

    # ---- bookkeeping ---------------------------------------------------------------
    def _log(self, kind, tensor, pages, **fields):
        if self.log is not None:
            self.log.append(TraceEvent(self.now, kind, tensor, pages, **fields))

    def _touch(self, tensor, when):
        self.last_access[tensor] = when
        self._seq += 1
        heapq.heappush(self._lru, _Access(when, self._seq, tensor))

    def _push(self, when, kind, tensor, pages, host=0):
        self._seq += 1
        heapq.heappush(self._events, _Transfer(when, self._seq, kind, tensor, pages, host))

    def _advance(self, until):
        """Complete every transfer finishing by ``until`` (in time order), then move there."""
        while self._events and self._events[0].done_s <= until:
            transfer = heapq.heappop(self._events)
            tensor, pages = transfer.tensor, transfer.pages
            self.now = max(self.now, transfer.done_s)
            if transfer.kind is EventKind.EVICT_END:
                self.outbound[tensor] -= pages
                self.used -= pages
            else:
                self.inbound[tensor] -= pages
                self.resident[tensor] += pages
                self.inbound_host[tensor] -= transfer.host
            self._log(transfer.kind, tensor, pages)
        self.now = max(self.now, until)

    def _wait(self, until):
        if until > self.now:
            self._boundary_stall[self._slot] += until - self.now
            self._advance(until)

    def _note_peak(self):
        if self.used > self.counters["peak_pages"]:
            self.counters["peak_pages"] = self.used

    # ---- transfers -----------------------------------------------------------------
    def _link(self, direction, nbytes, ready):
        if not self.tier.link_duplex:
            direction = "in"             # one queue for both directions
        start = max(ready, self.link_free[direction])
        done = start + nbytes / self.tier.link_bytes_per_s
        self.link_free[direction] = done
        return done

    def evict(self, tensor, pages, *, demand, destination=None):
        pages = min(pages, self.resident[tensor])
        if pages <= 0:
            return self.now
        if self.host_capacity:
            return self._evict_with_host(tensor, pages, demand=demand, destination=destination)
        size, resident = self.size[tensor], self.resident[tensor]
        # Pages [resident - pages, resident) leave; those below the clean tail need writing.
        dirty = max(0, min(resident, size - self.clean[tensor]) - (resident - pages))
        self.resident[tensor] -= pages
        self.clean[tensor] = max(self.clean[tensor], size - self.resident[tensor])
        self.counters["demand_evict_pages" if demand else "planned_evict_pages"] += pages
        self._log(EventKind.EVICT_BEGIN, tensor, pages, dirty=dirty)
        if dirty == 0:
            self.counters["dropped_clean_pages"] += pages
            self.used -= pages
            self._log(EventKind.EVICT_END, tensor, pages)
            return self.now
        nbytes = dirty * self.page_bytes
        ready = self.now + self.tier.request_overhead_s
        link_done = self._link("out", nbytes, ready)
        done = max(link_done, self.flash.program(nbytes, ready))
        self.outbound[tensor] += pages
        self.outbound_done[tensor] = max(self.outbound_done[tensor], done)
        self.counters["to_flash_pages"] += dirty
        self._push(done, EventKind.EVICT_END, tensor, pages)
        return done

    def fetch(self, tensor, pages, *, demand, protect, source=None):
        absent = self.size[tensor] - self.resident[tensor] - self.inbound[tensor] - self.outbound[tensor]
        pages = min(pages, absent)
        if pages <= 0:
            return self.now
        self.make_space(pages, protect)
        if self.host_capacity:
            return self._fetch_with_host(tensor, pages, demand=demand, source=source)
        self.used += pages
        self._note_peak()
        self.inbound[tensor] += pages
        self._log(EventKind.FETCH_BEGIN, tensor, pages)
        nbytes = pages * self.page_bytes
        ready = self.now + (self.tier.fault_latency_s if demand else self.tier.request_overhead_s)
        flash_done = self.flash.read(nbytes, ready)
        done = max(flash_done + self.page_bytes / self.tier.link_bytes_per_s,
                   self._link("in", nbytes, ready))
        self.inbound_done[tensor] = max(self.inbound_done[tensor], done)
        self.counters["from_flash_pages"] += pages
        self.counters["demand_fetch_pages" if demand else "planned_fetch_pages"] += pages
        if demand:
            self.counters["faults"] += 1
        self._push(done, EventKind.FETCH_END, tensor, pages)
        return done

    def _evict_with_host(self, tensor, pages, *, demand, destination=None):
        size, resident = self.size[tensor], self.resident[tensor]
        # Pages of the tensor with a valid flash copy that are in HBM now (clean counts
        # every page with a valid flash copy; host pages have none).
        clean_here = max(0, self.clean[tensor] - (size - resident) + self.host[tensor]
                         + self.inbound_host[tensor])
        dirty = max(0, pages - clean_here)
        if destination == "host" and dirty < pages:
            # The plan keeps these pages in host DRAM, to come back over the link: clean
            # pages move there too (and no longer count as having a flash copy) rather than
            # being dropped and read back from flash.
            self.clean[tensor] -= pages - dirty
            dirty = pages
        to_host = 0 if destination == "flash" else min(dirty, self.host_capacity - self.host_used)
        to_flash = dirty - to_host
        self.resident[tensor] -= pages
        self.clean[tensor] += to_flash
        self.host[tensor] += to_host
        self.host_used += to_host
        self.counters["demand_evict_pages" if demand else "planned_evict_pages"] += pages
        self._log(EventKind.EVICT_BEGIN, tensor, pages, dirty=dirty, host=to_host)
        if dirty == 0:
            self.counters["dropped_clean_pages"] += pages
            self.used -= pages
            self._log(EventKind.EVICT_END, tensor, pages)
            return self.now
        ready = self.now + self.tier.request_overhead_s
        done = ready
        if to_host:
            nbytes = to_host * self.page_bytes
            done = max(self._link("out", nbytes, ready),
                       ready + self.tier.host_latency_s + nbytes / self.tier.host_bytes_per_s)
        if to_flash:
            nbytes = to_flash * self.page_bytes
            done = max(done, self._link("out", nbytes, ready), self.flash.program(nbytes, ready))
        self.outbound[tensor] += pages
        self.outbound_done[tensor] = max(self.outbound_done[tensor], done)
        self.counters["to_flash_pages"] += to_flash
        self.counters["to_host_pages"] += to_host
        self._push(done, EventKind.EVICT_END, tensor, pages)
        return done

    def _fetch_with_host(self, tensor, pages, *, demand, source=None):
        # A planned fetch takes its pages from where its plan put them ("flash": flash
        # first); otherwise host DRAM first.
        in_flash = (self.size[tensor] - self.resident[tensor] - self.inbound[tensor]
                    - self.outbound[tensor] - self.host[tensor])
        if source == "flash":
            from_host = max(0, pages - in_flash)
        else:
            from_host = min(pages, self.host[tensor])
        from_flash = pages - from_host
        self.used += pages
        self._note_peak()
        self.inbound[tensor] += pages
        self.host[tensor] -= from_host
        self.host_used -= from_host
        self.inbound_host[tensor] += from_host
        self._log(EventKind.FETCH_BEGIN, tensor, pages, host=from_host)
        ready = self.now + (self.tier.fault_latency_s if demand else self.tier.request_overhead_s)
        done = ready
        if from_host:
            nbytes = from_host * self.page_bytes
            host_done = ready + self.tier.host_latency_s + nbytes / self.tier.host_bytes_per_s
            arrived = max(host_done + self.page_bytes / self.tier.link_bytes_per_s,
                          self._link("in", nbytes, ready + self.tier.host_latency_s))
            self._push(arrived, EventKind.FETCH_END, tensor, from_host, host=from_host)
            done = arrived
        if from_flash:
            nbytes = from_flash * self.page_bytes
            flash_done = self.flash.read(nbytes, ready)
            arrived = max(flash_done + self.page_bytes / self.tier.link_bytes_per_s,
                          self._link("in", nbytes, ready))
            self._push(arrived, EventKind.FETCH_END, tensor, from_flash)
            done = max(done, arrived)
        self.inbound_done[tensor] = max(self.inbound_done[tensor], done)
        self.counters["from_flash_pages"] += from_flash
        self.counters["from_host_pages"] += from_host
        self.counters["demand_fetch_pages" if demand else "planned_fetch_pages"] += pages
        if demand:
            self.counters["faults"] += 1
        return done

    def make_space(self, pages, protect):
        """Demand eviction (LRU over tensors outside ``protect``) until ``pages`` fit."""
        if pages > self.capacity:
            raise CapacityError(f"{pages} pages needed at once, HBM holds {self.capacity}")
        while self.capacity - self.used < pages:
            pending_out = [e.done_s for e in self._events if e.kind is EventKind.EVICT_END]
            if pending_out:
                self._wait(min(pending_out))
                continue
            victim = self._lru_victim(protect)
            if victim is None and self._events:
                # Only pages in flight are left: once they land they can be evicted.
                self._wait(self._events[0].done_s)
                continue
            if victim is None:
                raise CapacityError(
                    f"op {self.lt.graph.ops[self._slot].name!r}: {pages} pages needed, "
                    f"{self.capacity - self.used} free and nothing evictable "
                    f"(HBM {self.capacity} pages)")
            need = pages - (self.capacity - self.used)
            self.evict(victim, min(need, self.resident[victim]), demand=True)

    def _lru_victim(self, protect):
        stash = []
        victim = None
        while self._lru:
            entry = heapq.heappop(self._lru)
            tensor = entry.tensor
            if entry.time_s != self.last_access[tensor] or not self.alive[tensor]:
                continue                               # stale entry
            stash.append(entry)
            if self.resident[tensor] == 0 or tensor in protect:
                continue
            victim = tensor
            break
        for entry in stash:
            heapq.heappush(self._lru, entry)
        return victim

    # ---- one iteration -------------------------------------------------------------
    def reconcile(self, plan):
        """Bring weights and optimizer state to the residency ``plan`` expects at an
        iteration boundary (when a new plan replaces the previous one): prefetch what the
        plan expects in HBM, write out what it expects in flash."""
        expected_absent = plan.initial_absent(len(self.size))
        self._slot = 0
        for tensor in np.flatnonzero(self.lt.persistent & self.lt.used):
            tensor = int(tensor)
            absent = self.size[tensor] - self.resident[tensor] - self.inbound[tensor]
            want = int(expected_absent[tensor])
            if absent > want:
                if self.outbound[tensor]:
                    self._wait(self.outbound_done[tensor])
                self.fetch(tensor, absent - want, demand=False, protect={tensor})
            elif absent < want:
                done = self.evict(tensor, want - absent, demand=False)
                self._wait(done)

    def run_iteration(self, plan=None, *, reconcile=False):
        lt = self.lt
        n = lt.n_ops
        transfers = _PlannedTransfers.of(plan, n) if plan is not None else None
        self._boundary_stall = np.zeros(n)
        self.counters["peak_pages"] = self.used
        before = dict(self.counters)
        flash_before = dict(self.flash.stats)
        start = self.now
        compute = 0.0
        occupancy = [OccupancySample(self.now, self.used)]
        if reconcile and plan is not None:
            self.reconcile(plan)
        barriers = set(plan.sync_at) if plan is not None else set()
        for slot in range(n):
            self._slot = slot
            self._advance(self.now)
            working = lt.working_set[slot]
            protect = set(working)
            if slot in barriers:
                writing = [e.done_s for e in self._events if e.kind is EventKind.EVICT_END]
                if writing:
                    self._wait(max(writing))
            if transfers is not None:
                for chunk in transfers.evictions[slot]:
                    if self.alive[chunk.tensor]:
                        self.evict(chunk.tensor, chunk.pages, demand=False,
                                   destination=chunk.destination)
                for chunk in transfers.fetches[slot]:
                    tensor = chunk.tensor
                    if self.alive[tensor]:
                        if self.outbound[tensor]:
                            self._wait(self.outbound_done[tensor])
                        self.fetch(tensor, chunk.pages, demand=False, protect=protect | {tensor},
                                   source=chunk.destination)
            for tensor in lt.born_at[slot]:
                if not self.alive[tensor]:
                    self.make_space(self.size[tensor], protect)
                    self.alive[tensor] = True
                    self.resident[tensor] = self.size[tensor]
                    self.clean[tensor] = 0
                    self.used += self.size[tensor]
                    self._note_peak()
                    self._log(EventKind.ALLOC, tensor, self.size[tensor])
            for tensor in working:
                if self.outbound[tensor]:
                    self._wait(self.outbound_done[tensor])
                missing = self.size[tensor] - self.resident[tensor] - self.inbound[tensor]
                if missing > 0:
                    self.fetch(tensor, missing, demand=True, protect=protect)
            for tensor in working:
                if self.inbound[tensor]:
                    self._wait(self.inbound_done[tensor])
            for tensor in working:
                if self.resident[tensor] != self.size[tensor]:
                    raise AssertionError(f"{lt.tensor_ids[tensor]} not resident at op {slot}")
            self._log(EventKind.OP, None, 0, slot=slot)
            occupancy.append(OccupancySample(self.now, self.used))
            self.now += self.slot_times[slot]
            compute += self.slot_times[slot]
            for tensor in working:
                self._touch(tensor, self.now)
            for tensor in lt.writes[slot]:
                self.clean[tensor] = 0
            for tensor in lt.dies_after[slot]:
                self._free(tensor)
            occupancy.append(OccupancySample(self.now, self.used))
        self._advance(self.now)
        record = IterationRecord(
            index=self.iteration, start_s=start, end_s=self.now, compute_s=compute,
            stall_s=float(self._boundary_stall.sum()), stall_by_boundary=self._boundary_stall,
            counters={k: self.counters[k] - before[k] for k in self.counters if k != "peak_pages"}
            | {"peak_pages": self.counters["peak_pages"]},
            flash={k: self.flash.stats[k] - flash_before[k] for k in self.flash.stats},
            occupancy=occupancy)
        self.iteration += 1
        return record

    def _free(self, tensor):
        if self.inbound[tensor] or self.outbound[tensor]:
            self._wait(max(self.inbound_done[tensor], self.outbound_done[tensor]))
        self.used -= self.resident[tensor]
        self._log(EventKind.FREE, tensor, self.resident[tensor])
        self.resident[tensor] = 0
        self.clean[tensor] = 0
        self.alive[tensor] = False


class _PlannedTransfers(NamedTuple):
    """A plan's chunks by the slot whose boundary issues their write-out / prefetch."""

    evictions: list
    fetches: list

    @classmethod
    def of(cls, plan, n):
        transfers = cls([[] for _ in range(n)], [[] for _ in range(n)])
        for chunk in plan.chunks:
            transfers.evictions[chunk.evict_at % n].append(chunk)
            transfers.fetches[chunk.fetch_at % n].append(chunk)
        return transfers
