"""The race tracker (host/kernels/races.py) against its rules, access by access: a store
and any other access of another µthread race; on the scratchpad an atomic and a plain
access of another µthread, or atomics of two entries; in memory a µthread's access and a
GPU write of a later trigger. A race names the sector's address, the two accesses earlier
first, the two trigger numbers and the later access's pc."""

import numpy as np
import pytest

from matndp.host.kernels.races import AccessTracker, Race, UndoLog


BASE, SECTOR = 0x1000, 32
ADDRESS = BASE + 2 * SECTOR          # sector 2


def _tracker(limit=16):
    return AccessTracker("scratchpad", 8, SECTOR, BASE, UndoLog(), limit=limit)


def _access(tracker, kind, thread, pc, entry=0):
    sectors, threads = np.array([2]), np.array([thread])
    if kind == "load":
        tracker.load(sectors, threads, pc)
    elif kind == "store":
        tracker.store(sectors, threads, pc)
    else:
        tracker.atomic(sectors, threads, np.array([entry]), pc)


@pytest.mark.parametrize("first, second, kind", [
    ("store", "load", "store/load"),
    ("store", "store", "store/store"),
    ("store", "atomic", "store/atomic"),
    ("load", "store", "load/store"),
    ("load", "atomic", "load/atomic"),
    ("atomic", "load", "atomic/load"),
    ("atomic", "store", "atomic/store"),
    ("load", "load", None),
    ("atomic", "atomic", None),          # one entry's atomics are ordered
])
def test_two_micro_threads_on_one_sector(first, second, kind):
    tracker = _tracker()
    _access(tracker, first, 3, pc=10)
    _access(tracker, second, 5, pc=20)
    expected = [] if kind is None else [Race("scratchpad", ADDRESS, kind, 3, 5, 20)]
    assert tracker.races == expected and tracker.count == len(expected)


@pytest.mark.parametrize("first, second", [("store", "load"), ("store", "store"),
                                           ("load", "store"), ("atomic", "store"),
                                           ("store", "atomic")])
def test_one_micro_threads_own_accesses_never_race(first, second):
    tracker = _tracker()
    _access(tracker, first, 4, pc=1)
    _access(tracker, second, 4, pc=2)
    assert tracker.races == [] and tracker.count == 0


def test_atomics_of_two_entries_race_whichever_call_brings_them():
    tracker = _tracker()
    _access(tracker, "atomic", 3, pc=10, entry=0)
    _access(tracker, "atomic", 5, pc=20, entry=1)
    assert tracker.races == [Race("scratchpad", ADDRESS, "atomics of two entries", 3, 5, 20)]
    together = _tracker()
    together.atomic(np.array([2, 2]), np.array([6, 7]), np.array([0, 1]), 30)
    assert together.races == [Race("scratchpad", ADDRESS, "atomics of two entries", 6, 7, 30)]


def test_two_stores_of_one_call_to_one_sector_race():
    tracker = _tracker()
    tracker.store(np.array([1, 2, 2]), np.array([0, 1, 2]), 9)
    assert tracker.races == [Race("scratchpad", ADDRESS, "store/store", 1, 2, 9)]


@pytest.mark.parametrize("kind", ["store", "load"])
def test_a_gpu_write_of_a_later_trigger_races_with_an_access_before_it(kind):
    memory = AccessTracker("memory", 8, SECTOR, BASE, UndoLog())
    _access(memory, kind, 3, pc=10)
    memory.gpu_write(np.array([2]), np.array([6]))
    assert memory.races == [Race("memory", ADDRESS, f"{kind}/GPU write", 3, 6, None)]


@pytest.mark.parametrize("kind", ["store", "load"])
def test_an_access_after_a_gpu_write_of_a_later_trigger_races_with_it(kind):
    memory = AccessTracker("memory", 8, SECTOR, BASE, UndoLog())
    memory.gpu_write(np.array([2]), np.array([6]))
    _access(memory, kind, 4, pc=12)
    assert memory.races == [Race("memory", ADDRESS, f"{kind}/GPU write", 4, 6, 12)]
    # a µthread of that trigger or later sees the write: no race
    later = AccessTracker("memory", 8, SECTOR, BASE, UndoLog())
    later.gpu_write(np.array([2]), np.array([6]))
    _access(later, kind, 6, pc=12)
    assert later.races == []


def test_races_beyond_the_limit_are_counted_not_kept_and_a_mark_restores_both():
    tracker = _tracker(limit=2)
    tracker.store(np.arange(4), np.zeros(4, np.int64), 1)
    mark = tracker.mark()
    tracker.store(np.arange(4), np.ones(4, np.int64), 2)
    assert tracker.count == 4 and len(tracker.races) == 2
    assert [race.address for race in tracker.races] == [BASE, BASE + SECTOR]
    tracker.reset_to(mark)
    assert (tracker.races, tracker.count) == ([], 0)


def test_the_undo_log_restores_the_oldest_values_last_written_first():
    values = np.arange(6)
    undo = UndoLog()
    undo.save(values, np.array([1, 2]))
    values[[1, 2]] = [10, 20]
    undo.save(values, np.array([2, 3]))
    values[[2, 3]] = [200, 300]
    undo.rollback()
    assert values.tolist() == [0, 1, 2, 3, 4, 5]
    undo.save(values, np.array([0]))
    undo.clear()
    values[0] = 7
    undo.rollback()
    assert values[0] == 7
