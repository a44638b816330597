"""Detection of accesses whose order the hardware does not fix.

The engine runs a filter entry's µthreads concurrently and orders only three things: an
entry's initializer before its µthreads and its finalizer after them, the scratchpad
atomics of one entry's µthreads (trigger order), and a triggering GPU write before the
µthread it starts (and before later triggers' µthreads). Any other pair of accesses to one
sector by two µthreads of a run, at least one of them a write, may happen in either order
on the RTL, so its result is not deterministic. The simulator runs µthreads in trigger
order and reports every such pair it sees as a :class:`Race` (memory at sector
granularity, the unit of the memory port):

* memory or scratchpad: a store and any other access of another µthread;
* scratchpad: an atomic and a plain access of another µthread, or atomics of two entries;
* memory: a µthread's access and a GPU write of a later trigger.

Initializers and finalizers are not tracked: what orders them against other entries is
the runtime's sequencing, which the simulator does not see.
"""

from dataclasses import dataclass

import numpy as np


__all__ = ["Race", "AccessTracker", "UndoLog"]


_NONE = -1
_NO_READER = np.iinfo(np.int64).max
_MANY = -2


class UndoLog:
    """Old values of array elements, restored in reverse order by :meth:`rollback`."""

    def __init__(self):
        self._entries = []

    def save(self, array, index):
        self._entries.append((array, index, array[index].copy()))

    def rollback(self):
        for array, index, old in reversed(self._entries):
            array[index] = old
        self._entries.clear()

    def clear(self):
        self._entries.clear()


@dataclass(frozen=True)
class Race:
    """Two unordered accesses to one sector.

    space:   "memory" or "scratchpad"; address: the sector's byte address.
    kind:    what the two accesses were, earlier one first (e.g. "store/load").
    first, second: trigger numbers of the two µthreads (the GPU write's trigger number for
             a GPU access); pc: image index of the later access (None for a GPU write).
    """
    space: str
    address: int
    kind: str
    first: int
    second: int
    pc: object


class AccessTracker:
    """Per sector of one address space: the last storing µthread, the range of loading
    µthreads, atomics (entry and range of µthreads) and the last GPU write."""

    def __init__(self, space, sectors, sector_bytes, base, undo, limit=16):
        self.space, self.sector_bytes, self.base, self.undo = space, sector_bytes, base, undo
        self.writer = np.full(sectors, _NONE, dtype=np.int64)
        self.reader_min = np.full(sectors, _NO_READER, dtype=np.int64)
        self.reader_max = np.full(sectors, _NONE, dtype=np.int64)
        self.atomic_entry = np.full(sectors, _NONE, dtype=np.int64)
        self.atomic_min = np.full(sectors, _NO_READER, dtype=np.int64)
        self.atomic_max = np.full(sectors, _NONE, dtype=np.int64)
        self.gpu_last = np.full(sectors, _NONE, dtype=np.int64)
        self.races = []
        self.count = 0
        self.limit = limit

    def mark(self):
        return len(self.races), self.count

    def reset_to(self, mark):
        del self.races[mark[0]:]
        self.count = mark[1]

    def _report(self, found, sectors, first, second, kind, pc):
        hits = np.flatnonzero(found)
        if not hits.size:
            return
        self.count += hits.size
        for i in hits[:max(0, self.limit - len(self.races))]:
            self.races.append(Race(self.space, self.base + int(sectors[i]) * self.sector_bytes,
                                   kind, int(first[i]), int(second[i]), pc))

    def _others(self, low, high, threads):
        """Whether a range [low, high] of µthreads holds one other than ``threads``."""
        return (high >= 0) & ((low < threads) | (high > threads))

    def _duplicates(self, sectors, threads, kind, pc):
        order = np.argsort(sectors, kind="stable")
        ordered = sectors[order]
        repeated = np.flatnonzero(ordered[1:] == ordered[:-1])
        self._report(np.ones(repeated.size, bool), ordered[repeated + 1],
                     threads[order][repeated], threads[order][repeated + 1], kind, pc)

    def _update(self, array, sectors, values, ufunc):
        self.undo.save(array, sectors)
        ufunc.at(array, sectors, values)

    def gpu_write(self, sectors, triggers):
        """GPU writes of triggers ``triggers`` (all later than every tracked access)."""
        writer = self.writer[sectors]
        self._report(writer >= 0, sectors, writer, triggers, "store/GPU write", None)
        reader = self.reader_max[sectors]
        self._report(reader >= 0, sectors, reader, triggers, "load/GPU write", None)
        np.maximum.at(self.gpu_last, sectors, triggers)

    def load(self, sectors, threads, pc):
        writer = self.writer[sectors]
        self._report((writer >= 0) & (writer != threads), sectors, writer, threads, "store/load", pc)
        low, high = self.atomic_min[sectors], self.atomic_max[sectors]
        self._report(self._others(low, high, threads), sectors, high, threads, "atomic/load", pc)
        gpu = self.gpu_last[sectors]
        self._report(gpu > threads, sectors, threads, gpu, "load/GPU write", pc)
        self._update(self.reader_min, sectors, threads, np.minimum)
        self._update(self.reader_max, sectors, threads, np.maximum)

    def store(self, sectors, threads, pc):
        writer = self.writer[sectors]
        self._report((writer >= 0) & (writer != threads), sectors, writer, threads, "store/store", pc)
        low, high = self.reader_min[sectors], self.reader_max[sectors]
        self._report(self._others(low, high, threads), sectors, high, threads, "load/store", pc)
        low, high = self.atomic_min[sectors], self.atomic_max[sectors]
        self._report(self._others(low, high, threads), sectors, high, threads, "atomic/store", pc)
        gpu = self.gpu_last[sectors]
        self._report(gpu > threads, sectors, threads, gpu, "store/GPU write", pc)
        self._duplicates(sectors, threads, "store/store", pc)
        self.undo.save(self.writer, sectors)
        self.writer[sectors] = threads

    def atomic(self, sectors, threads, entries, pc):
        writer = self.writer[sectors]
        self._report((writer >= 0) & (writer != threads), sectors, writer, threads, "store/atomic", pc)
        low, high = self.reader_min[sectors], self.reader_max[sectors]
        self._report(self._others(low, high, threads), sectors, high, threads, "load/atomic", pc)
        owner = self.atomic_entry[sectors]
        self._report((owner != _NONE) & (owner != entries), sectors, self.atomic_max[sectors],
                     threads, "atomics of two entries", pc)
        order = np.lexsort((entries, sectors))
        same_sector = sectors[order][1:] == sectors[order][:-1]
        other_entry = entries[order][1:] != entries[order][:-1]
        clash = np.flatnonzero(same_sector & other_entry)
        self._report(np.ones(clash.size, bool), sectors[order][clash + 1],
                     threads[order][clash], threads[order][clash + 1], "atomics of two entries", pc)
        self.undo.save(self.atomic_entry, sectors)
        self.atomic_entry[sectors] = np.where((owner == _NONE) | (owner == entries), entries, _MANY)
        self._update(self.atomic_min, sectors, threads, np.minimum)
        self._update(self.atomic_max, sectors, threads, np.maximum)
