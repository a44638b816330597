"""Demand paging as CUDA Unified Memory does it: the ``lru`` baseline.

Pages are ``page_bytes`` (4 KiB). Before an op runs, every page of the tensors it reads or
writes that is not in HBM faults; the faults are serviced in batches of
``fault_batch_pages`` and the op is stalled until the last batch is in. Each batch costs
the fault latency (``fault_latency_s``: the driver's fault handling) and then its
transfers; a batch that needs HBM space first evicts least-recently-used pages of tensors
the op does not touch. With a full-duplex link (``link_duplex``) a batch's write-out and
its migration stream at once (the batch takes the longer of the two), otherwise one after
the other. An evicted page always moves (UVM keeps no clean copy of a page elsewhere):
to host DRAM while it has room, to flash after that; a faulted page comes from wherever
it is. New tensors are allocated in HBM without a fault, making space the same way.

Pages of one tensor are always touched together, by the same op, so at any instant all
resident pages of a tensor have the same last-access time; LRU ties go to the tensor the
op touched first, and within a tensor to its lowest pages (touched first). The executor
therefore keeps page *counts* per tensor and location, and does each op's faults,
batches and evictions with numpy over all its batches at once: exact page-granular LRU
with per-batch timing, at a cost per op rather than per page.

With ``fault_model`` (:class:`~host.tier.fault_model.FaultTimes`) the op is timed as G10
times a kernel that faults: the batcher moves the faulting pages (and the evictions they
cause) through the link at the link's, host memory's and flash's bandwidths, without a
latency per batch, and the kernel runs meanwhile at its fault-laden speed; it ends at
``max(start + t + ΔPF, start + transfer time)`` (:func:`~host.tier.fault_model.fault_delay_s`).
Pages not yet allocated count as faults of that model too, as in G10. ``keep_dead``: a
tensor is never freed after its last use (UVM gets no hint that its data is dead, as in
G10's Base UVM): its pages stay where they are, get evicted like live ones, and its next
iteration's first use faults them back. ``prefetch_ahead`` = k > 0: before op i runs, the
missing pages of op i + k's tensors are prefetched behind the demand faults, and pages of
ops i .. i + k are not evicted (DeepUM's correlation prefetching with G10's prefetch degree).
``host_demotes``: when host DRAM is full, its least recently used pages move on to flash
to make room for the evictions; otherwise the evictions go to flash themselves.
"""

import math

import numpy as np

from .events import EventKind, TraceEvent
from .fault_model import fault_delay_s
from .executor import CapacityError, IterationRecord, OccupancySample


__all__ = ["UVMExecutor"]

_INITIAL_KEY = -1e15          # weights present at start are older than any access


class UVMExecutor:
    def __init__(self, lifetimes, slot_times, capacity_pages, tier, flash_config, *,
                 initial_resident, log=True, fault_model=None, keep_dead=False,
                 prefetch_ahead=0, host_demotes=None, drop_dead=False):
        self.drop_dead = drop_dead
        self.fault_model = fault_model
        self.keep_dead = keep_dead
        self.prefetch_ahead = int(prefetch_ahead)
        self.host_demotes = tier.host_demotes if host_demotes is None else host_demotes
        self.pending = {}             # tensor -> (pages arriving by prefetch, time they land)
        self.link_in_free = 0.0
        self.lt = lifetimes
        self.slot_times = np.asarray(slot_times, dtype=float)
        if len(self.slot_times) != lifetimes.n_ops:
            raise ValueError(f"{len(self.slot_times)} op times for {lifetimes.n_ops} ops")
        self.capacity = int(capacity_pages)
        self.host_capacity = tier.host_pages
        self.tier, self.flash = tier, flash_config
        self.page_bytes = page = lifetimes.page_bytes
        n = len(lifetimes.tensor_ids)
        self.size = lifetimes.pages.astype(np.int64)
        self.hbm = np.zeros(n, dtype=np.int64)
        self.host = np.zeros(n, dtype=np.int64)
        self.alive = np.zeros(n, dtype=bool)
        self.lru_key = np.full(n, _INITIAL_KEY)
        self.log = [] if log else None
        self.now = 0.0
        self.clock = 0
        self.iteration = 0
        link = tier.link_bytes_per_s
        self.s_per_page = {
            "host_in": page / min(link, tier.host_bytes_per_s),
            "flash_in": page / min(link, flash_config.read_bytes_per_s),
            "host_out": page / min(link, tier.host_bytes_per_s),
            "flash_out": page / min(link, flash_config.program_bytes_per_s)}
        self.working = [np.asarray(w, dtype=np.int64) for w in lifetimes.working_set]
        self.position = max((len(w) for w in self.working), default=1) + 1
        self.counters = self._zero_counters()
        self.host_key = np.full(n, _INITIAL_KEY)
        self.dropped = np.zeros(n, dtype=np.int64)   # pages of dead data discarded (DeepUM)
        first = np.array([u[0] if u else 0 for u in lifetimes.uses])
        last = np.array([u[-1] if u else -1 for u in lifetimes.uses])
        self.live_from = np.where(lifetimes.persistent, 0, first)
        self.live_to = np.where(lifetimes.persistent, lifetimes.n_ops, last)
        host_free = self.host_capacity
        for tensor in np.flatnonzero(lifetimes.persistent & lifetimes.used):
            resident = int(initial_resident[tensor])
            if not 0 <= resident <= self.size[tensor]:
                raise ValueError(f"initial residency of {lifetimes.tensor_ids[tensor]} out of range")
            in_host = min(int(self.size[tensor]) - resident, host_free)
            host_free -= in_host
            self.alive[tensor] = True
            self.hbm[tensor] = resident
            self.host[tensor] = in_host
            self.lru_key[tensor] = _INITIAL_KEY + tensor
            self._log(EventKind.INIT, int(tensor), resident,
                      valid=int(self.size[tensor]) - resident - in_host, host=in_host)
        self.used = int(self.hbm.sum())
        self.host_used = int(self.host.sum())
        if self.used > self.capacity:
            raise CapacityError(f"initial residency {self.used} pages exceeds HBM of {self.capacity}")

    @staticmethod
    def _zero_counters():
        return {"to_flash_pages": 0, "from_flash_pages": 0, "to_host_pages": 0,
                "from_host_pages": 0, "demand_fetch_pages": 0, "demand_evict_pages": 0,
                "planned_evict_pages": 0, "planned_fetch_pages": 0, "dropped_clean_pages": 0,
                "faults": 0, "fault_batches": 0, "peak_pages": 0, "demoted_pages": 0}

    def _log(self, kind, tensor, pages, **fields):
        if self.log is not None:
            self.log.append(TraceEvent(self.now, kind, tensor, pages, **fields))

    # ---- one op ----------------------------------------------------------------------
    def _victims(self, working, pages):
        """(tensors, pages evicted from each) of the ``pages`` least recently used
        resident pages outside ``working``."""
        candidates = np.flatnonzero(self.alive & (self.hbm > 0))
        candidates = candidates[~np.isin(candidates, working)]
        if self.pending:
            candidates = candidates[~np.isin(candidates, list(self.pending))]
        order = candidates[np.argsort(self.lru_key[candidates], kind="stable")]
        cumulative = np.cumsum(self.hbm[order])
        if not len(order) or cumulative[-1] < pages:
            op = self.lt.graph.ops[self._slot].name
            raise CapacityError(f"op {op!r}: {pages} pages to evict, "
                                f"{int(cumulative[-1]) if len(order) else 0} evictable "
                                f"(HBM {self.capacity} pages)")
        count = int(np.searchsorted(cumulative, pages)) + 1
        victims = order[:count]
        taken = self.hbm[victims].copy()
        taken[-1] -= int(cumulative[count - 1]) - pages
        return victims, taken

    def _out_s(self, to_host, to_flash):
        s = self.s_per_page
        return (to_host * s["host_out"] + (to_host > 0) * self.tier.host_latency_s
                + to_flash * s["flash_out"] + (to_flash > 0) * self.flash.program_latency_s)

    def _in_s(self, from_host, from_flash):
        s = self.s_per_page
        return (from_host * s["host_in"] + (from_host > 0) * self.tier.host_latency_s
                + from_flash * s["flash_in"] + (from_flash > 0) * self.flash.read_latency_s)

    def _flash_pages(self, pages):
        """Flash pages touched by requests of ``pages`` migration pages each."""
        return np.ceil(pages * self.page_bytes / self.flash.page_bytes)

    def _run_slot(self, slot):
        self._slot = slot
        working = self.working[slot]
        newborn = np.array([k for k in self.lt.born_at[slot] if not self.alive[k]], dtype=np.int64)
        new_pages = int(self.size[newborn].sum())
        faulting = working[self.alive[working]]
        missing = self.size[faulting] - self.hbm[faulting]
        from_host = self.host[faulting]
        total_missing = int(missing.sum())
        free = self.capacity - self.used
        evictions = max(0, new_pages + total_missing - free)
        host_free = self.host_capacity - self.host_used
        to_host_total = min(evictions, host_free)
        start = self.now

        # Evict: the first ``to_host_total`` pages of the eviction order go to host DRAM.
        if evictions:
            victims, taken = self._victims(working, evictions)
            evicted_before = np.cumsum(taken) - taken
            to_host = np.minimum(evicted_before + taken, to_host_total) - \
                np.minimum(evicted_before, to_host_total)
            self.hbm[victims] -= taken
            self.host[victims] += to_host
            for tensor, pages, host in zip(victims.tolist(), taken.tolist(), to_host.tolist()):
                self._log(EventKind.EVICT_BEGIN, tensor, pages, dirty=pages, host=host)
                self._log(EventKind.EVICT_END, tensor, pages)
        self.used -= evictions
        self.host_used += to_host_total
        for tensor in newborn.tolist():
            self.alive[tensor] = True
            self.hbm[tensor] = self.size[tensor]
            self._log(EventKind.ALLOC, tensor, int(self.size[tensor]))
        self.used += new_pages

        # Space for the allocations is made before the op's first fault.
        alloc_evictions = max(0, new_pages - free)
        alloc_host = min(alloc_evictions, to_host_total)
        stall = float(self._out_s(alloc_host, alloc_evictions - alloc_host))
        batches = 0
        if total_missing:
            batch = self.tier.fault_batch_pages
            batches = math.ceil(total_missing / batch)
            starts = np.arange(batches, dtype=np.int64) * batch
            ends = np.minimum(starts + batch, total_missing)
            # The faulting pages in order: each tensor's host pages, then its flash pages.
            lengths = np.stack([from_host, missing - from_host], axis=1).ravel()
            is_host = np.tile([1, 0], len(missing))
            breaks = np.concatenate([[0], np.cumsum(lengths)])
            host_breaks = np.concatenate([[0], np.cumsum(lengths * is_host)])
            host_in = np.interp(ends, breaks, host_breaks) - np.interp(starts, breaks, host_breaks)
            flash_in = (ends - starts) - host_in
            evicted_a = np.maximum(0, new_pages + starts - free)
            evicted_b = np.maximum(0, new_pages + ends - free)
            out_host = np.minimum(evicted_b, to_host_total) - np.minimum(evicted_a, to_host_total)
            out_flash = (evicted_b - evicted_a) - out_host
            into, out = self._in_s(host_in, flash_in), self._out_s(out_host, out_flash)
            moving = np.maximum(into, out) if self.tier.link_duplex else into + out
            if not self.flash.duplex:
                # Reads and programs share the flash device: its part is their sum.
                moving = np.maximum(moving, self._in_s(0, flash_in) + self._out_s(0, out_flash))
            per_batch = self.tier.fault_latency_s + moving
            stall += float(per_batch.sum())
            self.flash_stats["page_reads"] += int(self._flash_pages(flash_in).sum())
            self.flash_stats["read_requests"] += int((flash_in > 0).sum())
            writes = np.concatenate([[alloc_evictions - alloc_host], out_flash])
        else:
            writes = np.array([alloc_evictions - alloc_host])
        self.flash_stats["page_programs"] += int(self._flash_pages(writes).sum())
        self.flash_stats["program_requests"] += int((writes > 0).sum())
        for tensor, pages, host in zip(faulting.tolist(), missing.tolist(), from_host.tolist()):
            if pages:
                self._log(EventKind.FETCH_BEGIN, tensor, pages, host=host)
        self.host_used -= int(from_host.sum())
        self.host[faulting] = 0
        self.hbm[faulting] = self.size[faulting]
        self.used += total_missing
        self.counters["peak_pages"] = max(self.counters["peak_pages"], self.used)

        counters = self.counters
        from_host_total = int(from_host.sum())
        counters["to_host_pages"] += to_host_total
        counters["to_flash_pages"] += evictions - to_host_total
        counters["from_host_pages"] += from_host_total
        counters["from_flash_pages"] += total_missing - from_host_total
        counters["demand_fetch_pages"] += total_missing
        counters["demand_evict_pages"] += evictions
        counters["faults"] += total_missing
        counters["fault_batches"] += batches
        self.now = start + stall
        for tensor, pages in zip(faulting.tolist(), missing.tolist()):
            if pages:
                self._log(EventKind.FETCH_END, tensor, pages)
        self._log(EventKind.OP, None, 0, slot=slot)
        self.stall_by_boundary[slot] = stall
        self.occupancy.append(OccupancySample(self.now, self.used))
        self.now += float(self.slot_times[slot])
        self.lru_key[working] = self.clock * self.position + np.arange(len(working))
        self.clock += 1
        self._free_dead(slot)
        self.occupancy.append(OccupancySample(self.now, self.used))

    def _free_dead(self, slot):
        for tensor in self.lt.dies_after[slot]:
            self._log(EventKind.FREE, tensor, int(self.hbm[tensor]))
            self.used -= int(self.hbm[tensor])
            self.host_used -= int(self.host[tensor])
            self.hbm[tensor] = self.host[tensor] = 0
            self.alive[tensor] = False

    # ---- G10's timing ------------------------------------------------------------------
    def _demote(self, pages, exclude):
        """Move the ``pages`` least recently used host-DRAM pages (of tensors outside
        ``exclude``) on to flash; return how many moved."""
        holders = np.flatnonzero(self.host > 0)
        holders = holders[~np.isin(holders, exclude)]
        order = holders[np.argsort(self.host_key[holders], kind="stable")]
        moved = 0
        for tensor in order.tolist():
            if moved >= pages:
                break
            take = int(min(self.host[tensor], pages - moved))
            self.host[tensor] -= take
            self.host_used -= take
            moved += take
            self._log(EventKind.DEMOTE, tensor, take)
        self.counters["demoted_pages"] += moved
        self.counters["to_flash_pages"] += moved
        return moved

    def _land_prefetches(self, until, tensors=None):
        """Complete the prefetches that have landed by ``until`` (or, for ``tensors``,
        wait for theirs); return the time waited."""
        waited = 0.0
        for tensor, (pages, done) in list(self.pending.items()):
            if done <= until or (tensors is not None and tensor in tensors):
                if done > self.now:
                    waited += done - self.now
                    self.now = done
                del self.pending[tensor]
                self._log(EventKind.FETCH_END, tensor, pages)
        return waited

    def _evict_for(self, pages, protect):
        """Make ``pages`` of HBM free: LRU victims outside ``protect`` go to host DRAM
        while it has room (demoting its oldest pages to flash when it is full and
        ``host_demotes``), to flash otherwise. Returns (to host, to flash, demoted)."""
        if pages <= 0:
            return 0, 0, 0
        victims, taken = self._victims(protect, pages)
        if self.drop_dead:
            dead = (self._slot < self.live_from[victims]) | (self._slot > self.live_to[victims])
            for tensor, count in zip(victims[dead].tolist(), taken[dead].tolist()):
                self._log(EventKind.DROP, tensor, count)
            self.hbm[victims[dead]] -= taken[dead]
            self.dropped[victims[dead]] += taken[dead]
            self.used -= int(taken[dead].sum())
            pages -= int(taken[dead].sum())
            victims, taken = victims[~dead], taken[~dead]
        host_free = self.host_capacity - self.host_used
        demoted = 0
        if self.host_demotes and self.host_capacity and host_free < pages:
            demoted = self._demote(pages - host_free, protect)
            host_free += demoted
        to_host_total = min(pages, host_free)
        evicted_before = np.cumsum(taken) - taken
        to_host = np.minimum(evicted_before + taken, to_host_total) - \
            np.minimum(evicted_before, to_host_total)
        self.hbm[victims] -= taken
        self.host[victims] += to_host
        self.host_key[victims[to_host > 0]] = self.clock * self.position
        for tensor, count, host in zip(victims.tolist(), taken.tolist(), to_host.tolist()):
            self._log(EventKind.EVICT_BEGIN, tensor, count, dirty=count, host=host)
            self._log(EventKind.EVICT_END, tensor, count)
        self.used -= pages
        self.host_used += to_host_total
        return to_host_total, pages - to_host_total, demoted

    def _transfer_s(self, in_host, in_flash, out_host, out_flash):
        """Time the batcher needs to move these pages: each direction of the link, and
        flash reads and programs, at their bandwidths, all at once (G10's batcher); on a
        flash device that is not duplex, reads and programs one after the other."""
        s = self.s_per_page
        link = self.page_bytes / self.tier.link_bytes_per_s
        into = max((in_host + in_flash) * link, in_host * s["host_in"], in_flash * s["flash_in"])
        out = max((out_host + out_flash) * link, out_host * s["host_out"],
                  out_flash * s["flash_out"])
        moving = max(into, out) if self.tier.link_duplex else into + out
        if not self.flash.duplex:
            # Reads and programs share the flash device: its part is their sum.
            moving = max(moving, in_flash * s["flash_in"] + out_flash * s["flash_out"])
        return moving

    def _split_bytes(self, tensors, missing, from_host, newborn_pages):
        page = self.page_bytes
        flash = (missing - from_host) * page
        return (float(from_host.sum()) * page, float(flash.sum()), newborn_pages * page)

    def _prefetch(self, slot):
        """DeepUM: the missing pages of op ``slot``'s tensors start moving now, behind the
        demand faults, into space LRU makes outside the running window (dropped pages are
        allocated again, without a transfer)."""
        n = self.lt.n_ops
        target = self.working[slot % n]
        window = np.unique(np.concatenate([self.working[(slot - k) % n]
                                           for k in range(self.prefetch_ahead + 1)]))
        wanted = target[self.alive[target]]
        wanted = wanted[~np.isin(wanted, list(self.pending))] if self.pending else wanted
        regrow = self.dropped[wanted]
        missing = self.size[wanted] - self.hbm[wanted] - regrow
        keep = (missing > 0) | (regrow > 0)
        wanted, missing, regrow = wanted[keep], missing[keep], regrow[keep]
        total = int(missing.sum()) + int(regrow.sum())
        if not total:
            return
        free = self.capacity - self.used
        evictable = self.alive & (self.hbm > 0)
        evictable[window] = False
        if self.pending:
            evictable[list(self.pending)] = False
        room = free + int(self.hbm[evictable].sum())
        if room < total:
            return                  # no space outside the running window: DeepUM waits
        from_host = self.host[wanted]
        out_host, out_flash, demoted = self._evict_for(max(0, total - free), window)
        for tensor, pages in zip(wanted.tolist(), regrow.tolist()):
            if pages:
                self._log(EventKind.ALLOC, tensor, pages)
        self.hbm[wanted] += regrow
        self.dropped[wanted] = 0
        self.used += int(regrow.sum())
        moving = int(missing.sum())
        in_host = int(from_host.sum())
        if moving or out_host or out_flash or demoted:
            # The write-outs that made the room take the pipes too, even when the pages
            # allocated again need no transfer of their own.
            done = max(self.now, self.link_in_free) + self._transfer_s(
                in_host, moving - in_host, out_host, out_flash + demoted)
            self.link_in_free = done
            self.flash_stats["page_reads"] += int(self._flash_pages(moving - in_host))
            self.flash_stats["read_requests"] += int(moving - in_host > 0)
            self.flash_stats["page_programs"] += int(self._flash_pages(out_flash + demoted))
            self.flash_stats["program_requests"] += int(out_flash + demoted > 0)
        if moving:
            for tensor, pages, host in zip(wanted.tolist(), missing.tolist(), from_host.tolist()):
                if pages:
                    self._log(EventKind.FETCH_BEGIN, tensor, pages, host=host)
                    self.pending[tensor] = (pages, done)
            self.host_used -= in_host
            self.host[wanted] = 0
            self.hbm[wanted] += missing
            self.used += moving
        counters = self.counters
        counters["to_host_pages"] += out_host
        counters["to_flash_pages"] += out_flash
        counters["from_host_pages"] += in_host
        counters["from_flash_pages"] += moving - in_host
        counters["planned_fetch_pages"] += moving
        counters["demand_evict_pages"] += out_host + out_flash
        self.counters["peak_pages"] = max(self.counters["peak_pages"], self.used)

    def _run_slot_g10(self, slot):
        self._slot = slot
        start = self.now
        self._land_prefetches(start)
        working = self.working[slot]
        self._land_prefetches(start, set(working.tolist()))
        start_faults = self.now
        newborn = np.array([k for k in self.lt.born_at[slot] if not self.alive[k]], dtype=np.int64)
        if self.keep_dead:
            newborn = working[~self.alive[working]]
        new_pages = int(self.size[newborn].sum())
        faulting = working[self.alive[working]]
        regrown = self.dropped[faulting].copy()
        missing = self.size[faulting] - self.hbm[faulting] - regrown
        from_host = self.host[faulting].copy()
        total_missing = int(missing.sum())
        free = self.capacity - self.used
        need = max(0, new_pages + int(regrown.sum()) + total_missing - free)
        if need and self.pending:
            # Pages still arriving cannot be evicted; when the rest cannot make the room,
            # the op first waits for the prefetches in flight to land.
            outside = self.alive & (self.hbm > 0)
            outside[working] = False
            outside[list(self.pending)] = False
            if int(self.hbm[outside].sum()) < need:
                self._land_prefetches(self.now, set(self.pending))
                start_faults = self.now
        out_host, out_flash, demoted = self._evict_for(need, working)
        for tensor, pages in zip(faulting.tolist(), regrown.tolist()):
            if pages:
                self._log(EventKind.ALLOC, tensor, pages)
        self.hbm[faulting] += regrown
        self.dropped[faulting] = 0
        self.used += int(regrown.sum())
        for tensor in newborn.tolist():
            self.alive[tensor] = True
            self.hbm[tensor] = self.size[tensor]
            self._log(EventKind.ALLOC, tensor, int(self.size[tensor]))
        self.used += new_pages
        in_host = int(from_host.sum())
        in_flash = total_missing - in_host
        transfer = self._transfer_s(in_host, in_flash, out_host, out_flash + demoted)
        delay = 0.0
        if total_missing or new_pages or regrown.any():
            page = self.page_bytes
            op = self.lt.graph.ops[slot]
            index = self.lt.index
            outputs_only = {index[t] for t in op.outputs if t not in op.inputs}
            is_out = np.array([k in outputs_only for k in faulting.tolist()], dtype=bool)
            new_out = sum(int(self.size[k]) for k in newborn.tolist() if k in outputs_only) + \
                int(regrown[is_out].sum())
            new_pages_all = new_pages + int(regrown.sum())
            flash_pages = missing - from_host
            delay = fault_delay_s(
                self.fault_model, slot,
                input_host=float(from_host[~is_out].sum()) * page,
                input_flash=float(flash_pages[~is_out].sum()) * page,
                input_new=float(new_pages_all - new_out) * page,
                output_host=float(from_host[is_out].sum()) * page,
                output_flash=float(flash_pages[is_out].sum()) * page,
                output_new=float(new_out) * page,
                link_bytes_per_s=self.tier.link_bytes_per_s,
                flash_bytes_per_s=min(self.tier.link_bytes_per_s, self.flash.read_bytes_per_s),
                fault_latency_s=self.tier.fault_latency_s,
                flash_latency_s=self.flash.read_latency_s)
        t = float(self.slot_times[slot])
        fault_stall = max(delay, transfer - t)
        self.link_in_free = max(self.link_in_free, start_faults) + transfer
        if transfer and self.pending:
            # Faults go before the prefetches in flight (G10's batcher serves them first):
            # those not yet landed finish the fault's transfer time later.
            for tensor, (pages, done) in list(self.pending.items()):
                if done > start_faults:
                    self.pending[tensor] = (pages, done + transfer)
        self.flash_stats["page_reads"] += int(self._flash_pages(in_flash))
        self.flash_stats["read_requests"] += int(in_flash > 0)
        self.flash_stats["page_programs"] += int(self._flash_pages(out_flash + demoted))
        self.flash_stats["program_requests"] += int(out_flash + demoted > 0)
        for tensor, pages, host in zip(faulting.tolist(), missing.tolist(), from_host.tolist()):
            if pages:
                self._log(EventKind.FETCH_BEGIN, tensor, pages, host=host)
        self.host_used -= in_host
        self.host[faulting] = 0
        self.hbm[faulting] = self.size[faulting]
        self.used += total_missing
        self.counters["peak_pages"] = max(self.counters["peak_pages"], self.used)
        counters = self.counters
        counters["to_host_pages"] += out_host
        counters["to_flash_pages"] += out_flash
        counters["from_host_pages"] += in_host
        counters["from_flash_pages"] += in_flash
        counters["demand_fetch_pages"] += total_missing
        counters["demand_evict_pages"] += out_host + out_flash
        counters["faults"] += total_missing + new_pages * bool(self.keep_dead)
        self.now = start_faults + fault_stall
        for tensor, pages in zip(faulting.tolist(), missing.tolist()):
            if pages:
                self._log(EventKind.FETCH_END, tensor, pages)
        self._log(EventKind.OP, None, 0, slot=slot)
        self.stall_by_boundary[slot] = self.now - start
        self.lru_key[working] = self.clock * self.position + np.arange(len(working))
        self.clock += 1
        if self.prefetch_ahead:
            # DeepUM issues the prefetch for kernel i + k as kernel i starts.
            self._prefetch(slot + self.prefetch_ahead)
        self.occupancy.append(OccupancySample(self.now, self.used))
        self.now += t
        if not self.keep_dead:
            self._free_dead(slot)
        self.occupancy.append(OccupancySample(self.now, self.used))

    def run_iteration(self, plan=None, *, reconcile=False):
        if plan is not None:
            raise ValueError("demand paging runs without a plan")
        n = self.lt.n_ops
        self.stall_by_boundary = np.zeros(n)
        self.counters = self._zero_counters()
        self.counters["peak_pages"] = self.used
        self.flash_stats = {"page_reads": 0, "page_programs": 0, "read_requests": 0,
                            "program_requests": 0}
        start = self.now
        self.occupancy = [OccupancySample(self.now, self.used)]
        run_slot = self._run_slot if self.fault_model is None else self._run_slot_g10
        for slot in range(n):
            run_slot(slot)
        flash = self.flash
        stats = self.flash_stats
        bus_bytes = (stats["page_reads"] + stats["page_programs"]) * flash.page_bytes
        stats["bus_bytes"] = bus_bytes
        stats["energy_j"] = (stats["page_reads"] * flash.read_energy_j_per_page
                             + stats["page_programs"] * flash.program_energy_j_per_page
                             + bus_bytes * flash.bus_energy_j_per_byte)
        record = IterationRecord(
            index=self.iteration, start_s=start, end_s=self.now,
            compute_s=float(self.slot_times.sum()), stall_s=float(self.stall_by_boundary.sum()),
            stall_by_boundary=self.stall_by_boundary, counters=dict(self.counters),
            flash=dict(stats), occupancy=self.occupancy)
        self.iteration += 1
        return record
