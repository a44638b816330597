"""TM-Training-like static planning over three tiers: HBM, host DRAM and flash.

The two-tier planner (:mod:`.tm`) budgets one flash pipe. With host DRAM between HBM and
flash, each evicted part of a tensor has a destination, and the two cost different things:
host DRAM costs capacity (it holds the pages for the whole gap) and the GPU's link; flash
costs the device's bandwidth, a fraction of the link's. So the planner keeps, per slot of
the ring, a budget of seconds for every pipe — the link out of and into HBM, the flash
device's writes and reads (a pipe that is not duplex has one budget for both directions) —
and host DRAM's occupancy.

The slots over HBM's capacity are relieved in time order, each by the tensors idle there in
Belady order (next use furthest away first). Each tensor's part that leaves is *split*
between the two destinations by a ratio: ``flash_share`` of it to flash, the rest to host
DRAM, and when one destination cannot take its share the other takes more. A part fits a
destination when its write-out fits that path's budgets between the use that opens the gap
and the slot, its read-back fits them before the next use, host DRAM (for that path) has
room over the whole gap, and no slot is left unable to meet its capacity: the pages a part
keeps in HBM at a slot while they are still being written, or after they were read back
early, are no more than that slot could still give up otherwise. Writes take the earliest
budget after the opening use, reads the latest before the next use.

Each transfer is issued in *pieces*, one per slot whose budget it took, at that slot's
boundary: the pieces issued at a boundary fit the slot's budget, so the executor's
first-come first-served pipes drain them within the slot, and a transfer due soon never
queues behind one due later (which a whole-tensor prefetch issued early would make it do).
The HBM occupancy the planner keeps is that of the pieces: a written piece frees its pages
at the next boundary, a read piece takes them at its own.

When no idle tensor fits, the first in Belady order goes anyway: what the budgets cannot
carry is written from the opening use and read just in time, and that transfer time is the
plan's planned stall. The ratio is the timing monitor's to adjust (:mod:`.tm`): the planner
is cheap enough (one pass of numpy per placed part) to be run for several ratios.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..plan import Chunk, Plan, PlanError, ring_add


__all__ = ["TierPaths", "plan_tm_tiers", "choose_flash_share", "least_flash_share"]


@dataclass(frozen=True)
class TierPaths:
    """What the three-tier planner knows of the machine: seconds per page of each pipe,
    fixed latencies of a transfer on each path, which pipes are duplex, and host DRAM's
    capacity in pages."""

    link_page_s: float            # one page across the GPU's link
    host_page_s: float            # one page to or from host DRAM (link and host memory)
    flash_write_page_s: float     # one page programmed (sustained)
    flash_read_page_s: float      # one page read (sustained)
    host_latency_s: float         # fixed cost of a transfer to or from host DRAM
    flash_write_latency_s: float
    flash_read_latency_s: float
    link_duplex: bool
    flash_duplex: bool
    host_pages: int

    def __post_init__(self):
        for name in ("link_page_s", "host_page_s", "flash_write_page_s", "flash_read_page_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"tier paths: {name} must be positive, got {getattr(self, name)!r}")
        for name in ("host_latency_s", "flash_write_latency_s", "flash_read_latency_s"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"tier paths: {name} must not be negative, got {getattr(self, name)!r}")
        if not isinstance(self.host_pages, int) or self.host_pages < 0:
            raise ValueError(f"tier paths: host_pages must be an integer >= 0, got {self.host_pages!r}")

    @classmethod
    def of(cls, tier, flash, page_bytes):
        link = page_bytes / tier.link_bytes_per_s
        return cls(
            link_page_s=link,
            host_page_s=page_bytes / min(tier.link_bytes_per_s, tier.host_bytes_per_s),
            flash_write_page_s=page_bytes / flash.program_bytes_per_s,
            flash_read_page_s=page_bytes / flash.read_bytes_per_s,
            host_latency_s=tier.request_overhead_s + tier.host_latency_s,
            flash_write_latency_s=tier.request_overhead_s + flash.program_latency_s,
            flash_read_latency_s=tier.request_overhead_s + flash.read_latency_s + link,
            link_duplex=tier.link_duplex, flash_duplex=flash.duplex,
            host_pages=int(tier.host_bytes // page_bytes))


def _allot(capacity, pages):
    """Whole pages per slot of ``capacity`` (pages each slot can carry, in the order the
    slots are taken) until ``pages`` are placed: (per-slot pages, pages placed)."""
    if len(capacity) == 0:
        return np.zeros(0, dtype=np.int64), 0
    taken = np.minimum(np.floor(np.cumsum(capacity) + 1e-9), pages)
    per_slot = np.diff(np.concatenate([[0.0], taken])).astype(np.int64)
    return per_slot, int(taken[-1])


_PATHS = ("flash", "host")
# How many candidates, in Belady order, the fallback compares.
_FALLBACK_CANDIDATES = 16


class _TieredPlanner:
    def __init__(self, lifetimes, slot_times, capacity, paths, derate, flash_share):
        self.lt = lifetimes
        self.n = n = lifetimes.n_ops
        self.capacity = int(capacity)
        self.paths = paths
        self.flash_share = float(flash_share)
        times = np.asarray(slot_times, dtype=float)
        self.cum = np.concatenate([[0.0], np.cumsum(np.concatenate([times, times, times]))])
        budget = times * np.asarray(derate, dtype=float)
        link_out = budget.copy()
        link_in = link_out if not paths.link_duplex else budget.copy()
        flash_write = budget.copy()
        flash_read = flash_write if not paths.flash_duplex else budget.copy()
        # (destination, direction) -> the pipes it crosses, with seconds per page on each.
        self.pipes = {
            ("host", "out"): ((link_out, paths.host_page_s),),
            ("host", "in"): ((link_in, paths.host_page_s),),
            ("flash", "out"): ((link_out, paths.link_page_s),
                               (flash_write, paths.flash_write_page_s)),
            ("flash", "in"): ((link_in, paths.link_page_s),
                              (flash_read, paths.flash_read_page_s)),
        }
        self.latency = {("host", "out"): paths.host_latency_s, ("host", "in"): paths.host_latency_s,
                        ("flash", "out"): paths.flash_write_latency_s,
                        ("flash", "in"): paths.flash_read_latency_s}
        self.occupancy = lifetimes.base_occupancy.astype(np.int64).copy()
        self.host_occupancy = np.zeros(n, dtype=np.int64)
        self.stall = np.zeros(n)
        self.chunks = []
        gaps = lifetimes.gaps
        self.gaps = gaps
        self.lo, self.hi, remaining, self.dirty = lifetimes.gap_arrays()
        self.remaining = remaining.copy()
        # Pages every slot could still give up: the remaining pages of the gaps idle there.
        self.evictable = np.zeros(n, dtype=np.int64)
        for index in range(len(gaps)):
            ring_add(self.evictable, int(self.lo[index]), int(self.hi[index]),
                     int(self.remaining[index]))
        self._carry = {}

    # ---- pipes -------------------------------------------------------------------------
    def carry(self, key, start, stop):
        """Pages each slot of ``start .. stop - 1`` (absolute slots) can still carry on
        path ``key``."""
        if key not in self._carry:
            budgets = [np.maximum(budget, 0.0) / cost for budget, cost in self.pipes[key]]
            self._carry[key] = budgets[0] if len(budgets) == 1 else np.minimum(*budgets)
        return self._carry[key][np.arange(start, stop) % self.n]

    def carried(self, key, slots):
        """Pages path ``key`` can carry from slot 0 of the ring up to each of ``slots``
        (absolute boundaries, any copy of the ring)."""
        name = ("sum",) + key
        if name not in self._carry:
            self.carry(key, 0, 0)
            self._carry[name] = np.concatenate([[0.0], np.cumsum(self._carry[key])])
        running = self._carry[name]
        slots = np.asarray(slots)
        return (slots // self.n) * running[-1] + running[slots % self.n]

    def consume(self, key, slots, pages):
        for budget, cost in self.pipes[key]:
            np.subtract.at(budget, np.asarray(slots) % self.n, np.asarray(pages) * cost)
        self._carry.clear()

    def pipe_s(self, key):
        """Seconds per page on the slowest pipe of path ``key``."""
        return max(cost for _, cost in self.pipes[key])

    # ---- the loop ----------------------------------------------------------------------
    def run(self):
        n = self.n
        while True:
            crowded = np.flatnonzero(self.occupancy > self.capacity)
            if len(crowded) == 0:
                return
            slot = int(crowded[0])
            over = int(self.occupancy[slot]) - self.capacity
            at = np.where(self.lo <= slot, slot, slot + n)      # the slot in each gap's frame
            inside = (self.lo <= at) & (at < self.hi) & (self.remaining > 0)
            candidates = np.flatnonzero(inside)
            if len(candidates) == 0:
                self.reshape_in_transit(slot, over)
                continue
            at = at[candidates]
            order = np.argsort(-(self.cum[self.hi[candidates]] - self.cum[at]), kind="stable")
            candidates, at = candidates[order], at[order]
            fits = {path: self.fits(path, candidates, at) for path in _PATHS}
            usable = np.flatnonzero((fits["flash"] >= 1) | (fits["host"] >= 1))
            if len(usable):
                k = int(usable[0])
                self.place(int(candidates[k]), int(at[k]), min(int(self.remaining[candidates[k]]), over),
                           fits["flash"][k], fits["host"][k])
                continue
            self.fallback(candidates, at, over, slot)

    def place(self, index, at, target, flash_fit, host_fit):
        """Split ``target`` pages of gap ``index`` between flash and host DRAM by the ratio,
        the other destination taking what one cannot."""
        share = self.flash_share
        flash = int(min(flash_fit, round(share * target)))
        host = int(min(host_fit, target - flash))
        if flash:
            self.commit(index, "flash", flash, at)
            host = int(min(host, self.fits("host", np.array([index]), np.array([at]))[0]))
        if host:
            self.commit(index, "host", host, at)
        short = target - flash - host
        if short > 0:
            more = int(min(short, self.fits("flash", np.array([index]), np.array([at]))[0]))
            if more:
                self.commit(index, "flash", more, at)

    def fallback(self, candidates, at, over, slot):
        """No idle tensor fits: of the first few in Belady order, the one (and the path)
        whose leaving costs the least planned stall per page goes, the rest of its
        transfers as planned stall."""
        best = None
        for k, index in enumerate(candidates[:_FALLBACK_CANDIDATES]):
            index, at_k = int(index), int(at[k])
            target = min(int(self.remaining[index]), over)
            for path in _PATHS:
                pages = int(min(target, self.fits(path, np.array([index]), np.array([at_k]),
                                                  partial=True)[0]))
                if pages >= 1:
                    cost = self.partial_stall(index, path, pages, at_k) / pages
                    if best is None or cost < best[0]:
                        best = (cost, index, path, pages, at_k)
        if best is None:
            # None keeps every slot feasible: the first goes anyway, read just in time; a
            # slot it leaves over capacity is relieved in its turn.
            index, at_k = int(candidates[0]), int(at[0])
            pages = min(int(self.remaining[index]), over)
            room = self.paths.host_pages - int(self.host_occupancy[np.arange(
                self.lo[index], self.hi[index]) % self.n].max())
            path = "host" if self.dirty[index] and room >= pages else "flash"
            self.commit(index, path, pages, at_k, partial=True, just_in_time=True)
            return
        _, index, path, pages, at_k = best
        self.commit(index, path, pages, at_k, partial=True)

    def partial_stall(self, index, path, pages, at):
        """The planned stall of :meth:`commit` with ``partial``, without committing."""
        lo, hi = int(self.lo[index]), int(self.hi[index])
        stall = 0.0
        if self.dirty[index]:
            key = (path, "out")
            _, placed = _allot(self.carry(key, lo, at), pages)
            if placed < pages:
                stall += (pages - placed) * self.pipe_s(key) + self.latency[key]
        key = (path, "in")
        capacity = self.landing(self.carry(key, at + 1, hi)[::-1], at, hi, pages)
        _, placed = _allot(capacity, pages)
        if placed < pages:
            stall += (pages - placed) * self.pipe_s(key) + self.latency[key]
        return stall

    def reshape_in_transit(self, slot, over):
        """No idle tensor has pages left to give at ``slot``: the pressure there is pages in
        transit. The largest parts read back before the slot are read just in time instead,
        and those still being written are taken as written by it, their transfer time
        becoming planned stall, until the slot fits."""
        n = self.n
        order = sorted(range(len(self.chunks)), key=lambda k: -self.chunks[k].pages)
        for k in order:
            if over <= 0:
                return
            chunk = self.chunks[k]
            at = slot if chunk.gap_after < slot else slot + n
            if not chunk.gap_after < at < chunk.fetch_due:
                continue
            path = chunk.destination
            if chunk.fetch_at <= at:
                key = (path, "in")
                ring_add(self.occupancy, chunk.fetch_at, chunk.fetch_due, -chunk.pages)
                if path == "host":
                    ring_add(self.host_occupancy, chunk.fetch_at, chunk.fetch_due, chunk.pages)
                self.stall[chunk.fetch_due % n] += chunk.pages * self.pipe_s(key) + self.latency[key]
                self.chunks[k] = replace(chunk, fetch_at=chunk.fetch_due)
            elif chunk.evict_at <= at < chunk.evict_due:
                key = (path, "out")
                ring_add(self.occupancy, at, chunk.evict_due, -chunk.pages)
                self.stall[at % n] += chunk.pages * self.pipe_s(key) + self.latency[key]
                self.chunks[k] = replace(chunk, evict_due=at)
            else:
                continue
            over -= chunk.pages
        if over > 0:
            raise PlanError(f"no static plan fits HBM of {self.capacity} pages at op "
                            f"{self.lt.graph.ops[slot].name!r} "
                            f"({int(self.occupancy[slot])} pages needed)")

    def fits(self, path, candidates, at, *, partial=False):
        """Most pages of each candidate gap that can leave for ``path`` at slot ``at`` (in
        the gap's frame; all candidates relieve the same slot): budgets (unless
        ``partial``: then what they cannot carry goes as planned stall), host DRAM's room,
        and every slot of the gap kept feasible."""
        n = self.n
        # Shift every gap to the middle copy of the ring, where the slot is slot + n.
        shift = n - (at - at.min())
        lo, hi = self.lo[candidates] + shift, self.hi[candidates] + shift
        here = int(at.min()) + n
        write, read = (path, "out"), (path, "in")
        dirty = self.dirty[candidates]
        bound = self.remaining[candidates].astype(float)
        if not partial:
            bound = np.minimum(bound, np.where(
                dirty, np.floor(self.carried(write, here) - self.carried(write, lo) + 1e-9),
                np.inf))
            bound = np.minimum(bound, np.floor(self.carried(read, hi)
                                               - self.carried(read, here + 1) + 1e-9))
            late = ((dirty & (self.cum[here] - self.cum[lo] < self.latency[(path, "out")]))
                    | (self.cum[hi] - self.cum[here + 1] < self.latency[(path, "in")]))
            bound = np.where(late, 0.0, bound)
        slack = self.capacity + self.evictable - self.occupancy
        # Still in HBM while being written: at slot u in [lo, here) the part keeps what is
        # not yet written, p - (write capacity of [lo, u)) <= slack[u]. The slots are
        # relieved in time order, so those before this one already meet their capacity
        # and can give up this gap's pages (slack >= evictable >= remaining) — except the
        # slots of a gap that wraps from the previous iteration's end, not yet relieved.
        begin = int(lo.min())
        wraps = dirty & (lo < here) & (self.lo[candidates] > at % n)
        if wraps.any():
            first = int(lo[wraps].min())
            u = np.arange(first, here)
            term = slack[u % n] + self.carried(write, u)
            suffix = np.minimum.accumulate(term[::-1])[::-1]
            written = np.full(len(candidates), np.inf)
            written[wraps] = suffix[lo[wraps] - first] - self.carried(write, lo[wraps])
            bound = np.minimum(bound, np.floor(written + 1e-9))
        # Read back early: at slot u in [here + 1, hi) the part keeps what is already read,
        # p - (read capacity of (u, hi)) <= slack[u]; with ``partial`` the landing is cut
        # to fit at commit time instead.
        end = int(hi.max())
        if not partial and end > here + 1:
            u = np.arange(here + 1, end)
            term = slack[u % n] - self.carried(read, u + 1)
            prefix = np.minimum.accumulate(term)
            has = hi > here + 1
            early = np.full(len(candidates), np.inf)
            early[has] = prefix[hi[has] - 2 - here] + self.carried(read, hi[has])
            bound = np.minimum(bound, np.floor(early + 1e-9))
        if path == "host":
            # A tensor never written leaves by being dropped (flash has it) and comes back
            # from flash: it never goes to host DRAM.
            bound = np.where(dirty, bound, 0.0)
            host = self.host_occupancy
            before = np.maximum.accumulate(host[np.arange(begin, here + 1) % n][::-1])[::-1]
            after = np.maximum.accumulate(host[np.arange(here, end) % n])
            bound = np.minimum(bound, self.paths.host_pages
                               - np.maximum(before[lo - begin], after[hi - 1 - here]))
        return np.maximum(bound, 0.0)

    def landing(self, capacity, at, hi, pages):
        """Read ``capacity`` (slots latest first) cut so that the pages read early are no
        more than any slot until the use can still give up otherwise."""
        n = self.n
        slots = np.arange(hi - 1, at, -1) % n
        slack = self.capacity + self.evictable[slots] - self.occupancy[slots]
        allowed = np.zeros(len(capacity))
        least = np.inf                    # the least room left at the slots after this one
        left = pages
        for k in range(len(capacity)):
            least = min(least, float(slack[k]))
            take = min(float(np.floor(capacity[k] + 1e-9)), left, least)
            if take > 0:
                allowed[k] = take
                least -= take
                left -= take
            if left <= 0:
                break
        return allowed

    def commit(self, index, path, pages, at, partial=False, just_in_time=False):
        """``pages`` of gap ``index`` leave HBM for ``path`` so that they are out at slot
        ``at``: written in pieces in the earliest budget after the opening use, read back in
        pieces in the latest budget before the next use; with ``partial`` what the budgets
        lack is written from the opening use and read just in time, as planned stall."""
        n = self.n
        lo, hi = int(self.lo[index]), int(self.hi[index])
        gap = self.gaps[index]
        writes = []                               # (evict_at, evict_due, pages)
        if self.dirty[index]:
            key = (path, "out")
            per_slot, placed = _allot(self.carry(key, lo, at), pages)
            slots = np.flatnonzero(per_slot) + lo
            if len(slots):
                self.consume(key, slots, per_slot[slots - lo])
                writes += [(int(s), int(s) + 1, int(per_slot[s - lo])) for s in slots]
            if placed < pages:
                left = pages - placed
                writes.append((lo, max(lo, at), left))
                self.stall[at % n] += left * self.pipe_s(key) + self.latency[key]
        else:
            writes.append((lo, lo, pages))        # a clean copy is in flash: dropped
        key = (path, "in")
        capacity = self.carry(key, at + 1, hi)[::-1]
        if just_in_time:
            capacity = np.zeros(len(capacity))
        elif partial:
            capacity = self.landing(capacity, at, hi, pages)
        per_slot, placed = _allot(capacity, pages)
        reads = [(hi - 1 - int(k), int(per_slot[k])) for k in np.flatnonzero(per_slot)]
        if reads:
            self.consume(key, [s for s, _ in reads], [q for _, q in reads])
        if placed < pages:
            left = pages - placed
            reads.append((hi, left))
            self.stall[hi % n] += left * self.pipe_s(key) + self.latency[key]
        reads.sort()
        for _, due, count in writes:
            ring_add(self.occupancy, due, hi, -count)
        for fetch_at, count in reads:
            ring_add(self.occupancy, fetch_at, hi, count)
        self.remaining[index] -= pages
        ring_add(self.evictable, lo, hi, -pages)
        self._carry.clear()
        # Pair the written and the read pages in order: every write is due by the slot
        # and every read starts after it, so any pairing keeps each piece's order.
        w, r = 0, 0
        wleft, rleft = writes[0][2], reads[0][1]
        while w < len(writes):
            count = min(wleft, rleft)
            evict_at, due, _ = writes[w]
            self.chunks.append(Chunk(gap.tensor, count, gap.after, evict_at, due, reads[r][0],
                                     hi, destination=path))
            if path == "host":
                # Host DRAM holds a piece from its write's issue to its read's.
                ring_add(self.host_occupancy, evict_at, reads[r][0], count)
            wleft -= count
            rleft -= count
            if wleft == 0:
                w += 1
                wleft = writes[w][2] if w < len(writes) else 0
            if rleft == 0:
                r += 1
                rleft = reads[r][1] if r < len(reads) else 0


def least_flash_share(lifetimes, capacity_pages, host_pages):
    """The split ratio below which host DRAM cannot hold its share of what must leave HBM
    at the fullest slot."""
    excess = int(lifetimes.base_occupancy.max()) - int(capacity_pages)
    return 0.0 if excess <= 0 else max(0.0, 1.0 - host_pages / excess)


def plan_tm_tiers(lifetimes, slot_times, capacity_pages, paths, derate=None, flash_share=None):
    """The three-tier TM plan (the module's docstring) for ``capacity_pages`` of HBM over
    the machine ``paths`` describes (:class:`TierPaths`), with ``flash_share`` of every
    evicted part going to flash where it fits; None: the ratio with the least planned
    stall (:func:`choose_flash_share`)."""
    if flash_share is None:
        return choose_flash_share(lifetimes, slot_times, capacity_pages, paths, derate)[1]
    if not 0 <= flash_share <= 1:
        raise ValueError(f"flash share must be within [0, 1], got {flash_share!r}")
    n = lifetimes.n_ops
    derate = np.ones(n) if derate is None else np.asarray(derate, dtype=float)
    planner = _TieredPlanner(lifetimes, slot_times, capacity_pages, paths, derate, flash_share)
    planner.run()
    chunks = tuple(sorted(planner.chunks, key=lambda c: (c.fetch_at, c.fetch_due, c.evict_at,
                                                         c.tensor, c.gap_after, c.pages)))
    return Plan("tm", n, int(capacity_pages), chunks, strict=True,
                planned_stall_s=tuple(float(s) for s in planner.stall))


# The ratio search: steps of the flash share, and the relative gain in planned stall a
# step must bring to go on.
SHARE_STEP = 0.1
SHARE_GAIN = 0.01


def choose_flash_share(lifetimes, slot_times, capacity_pages, paths, derate=None):
    """(split ratio, plan): from the least ratio that leaves host DRAM its share at the
    fullest slot (:func:`least_flash_share`), up in steps of :data:`SHARE_STEP` while the
    planned stall falls by more than :data:`SHARE_GAIN` of itself. More flash relieves host
    DRAM, whose room the short gaps near the peak need; too much crowds the flash pipes."""
    least = least_flash_share(lifetimes, capacity_pages, paths.host_pages)
    best = None
    for step in range(int(np.ceil((1 - least) / SHARE_STEP)) + 1):
        share = round(min(least + step * SHARE_STEP, 1.0), 2)
        plan = plan_tm_tiers(lifetimes, slot_times, capacity_pages, paths, derate,
                             flash_share=share)
        stall = sum(plan.planned_stall_s)
        if best is not None and stall >= best[2] * (1 - SHARE_GAIN):
            break
        best = (share, plan, stall)
        if stall == 0:
            break
    return best[0], best[1]
