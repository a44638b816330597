"""Bulk checks of a batch run against models written without the RTL: a numpy model of
memory replayed over the order in which memory accepted the requests, and the trigger's
matching rule (docs/trigger.md).

:func:`check_gpu_path`: every GPU request reached memory unchanged and in order, and every
read got exactly one response, for its id, carrying what the memory model held for it;
the memory dumped equals the model's. :func:`check_events`: the events the engine took are
exactly those of the accesses in the programmed ranges, writes in request order, reads in
response order, with their data. Each raises :class:`CheckFailed` naming the first
difference and returns a summary of what it checked.
"""

import numpy as np

from matndp.hw.layouts import ResponseStatus
from matndp.host.runtime import FilterRange


__all__ = ["CheckFailed", "replay_memory", "check_gpu_path", "check_events", "matching_entries"]


_FIELDS = ("addr", "write", "data", "mask", "id")


class CheckFailed(AssertionError):
    """A batch run's logs disagree with the models; ``cycle``: the cycle of the first wrong
    record, where its log says."""

    def __init__(self, message, cycle=None):
        super().__init__(message)
        self.cycle = cycle


def replay_memory(layout, image, addr, write, data, mask):
    """The numpy memory model: requests (columns, in the order memory accepted them)
    applied to ``image`` laid out by ``layout``. Returns (the data each request read, each
    request's response status, the image afterwards); a write takes the bytes its mask
    enables, a read returns the sector as it stands then, an unmapped access fails with
    DECODE_ERROR, an access to a failing region with SLAVE_ERROR."""
    count = len(addr)
    sector = layout.sector_bytes
    index = layout.image_index(addr)
    mapped = index >= 0
    order = np.argsort(index, kind="stable")
    sorted_index = index[order]
    positions = np.arange(count)
    group_start = np.zeros(count, dtype=np.int64)
    if count:
        starts = np.flatnonzero(np.concatenate([[True], sorted_index[1:] != sorted_index[:-1]]))
        group_start[starts] = starts
        group_start = np.maximum.accumulate(group_start)
        last_of_group = np.concatenate([starts[1:] - 1, [count - 1]])
    read_data = np.zeros((count, sector), dtype=np.uint8)
    final = image.copy()
    writes = np.asarray(write, dtype=bool) & mapped
    sorted_writes = writes[order]
    sorted_data = data[order]
    safe_index = np.where(sorted_index >= 0, sorted_index, 0)
    for byte in range(sector):
        enabled = sorted_writes & ((mask[order] >> np.uint64(byte)) & np.uint64(1)).astype(bool)
        last = np.maximum.accumulate(np.where(enabled, positions, -1)) if count else positions
        # A read sees the last enabled write before it to the same sector, else the image.
        written = last >= group_start
        value = np.where(written, sorted_data[np.maximum(last, 0), byte],
                         image[safe_index, byte] if len(image) else 0)
        read_data[order, byte] = np.where(sorted_index >= 0, value, 0)
        if count:
            ends = last_of_group[sorted_index[last_of_group] >= 0]
            touched = written[ends]
            final[sorted_index[ends[touched]], byte] = sorted_data[last[ends[touched]], byte]
    status = np.where(mapped, ResponseStatus.OKAY.value,
                      np.where(layout.failing_at(addr), ResponseStatus.SLAVE_ERROR.value,
                               ResponseStatus.DECODE_ERROR.value))
    return read_data, status.astype(np.uint64), final


def _first_difference(what, got, expected):
    """Raise naming the first row where ``got`` and ``expected`` (column dicts) differ."""
    for name in expected:
        a, b = got[name], expected[name]
        differs = (a != b) if a.ndim == 1 else (a != b).any(axis=1)
        if differs.any():
            row = int(np.flatnonzero(differs)[0])
            raise CheckFailed(f"{what}: {name} differs first at row {row} of {len(differs)}: "
                              f"{_show(a[row])} != {_show(b[row])} (expected)",
                              int(got["cycle"][row]) if "cycle" in got else None)


def _show(value):
    if np.ndim(value):
        return "0x" + bytes(np.asarray(value)[::-1]).hex()
    return hex(int(value))


def _segments(result, cycles):
    """Per memory request (by acceptance cycle), the image load in force: a list of
    (row mask, layout key)."""
    job = result.job
    loads = [(result.results[key]["cycle"], key) for key in job.layouts]
    if not loads:
        raise CheckFailed("the job loaded no memory image to check memory against")
    segments = []
    for number, (cycle, key) in enumerate(loads):
        end = loads[number + 1][0] if number + 1 < len(loads) else None
        rows = cycles >= cycle if number else np.ones(len(cycles), dtype=bool)
        if end is not None:
            rows &= cycles < end
        segments.append((rows, key))
    return segments


def check_gpu_path(result, *, complete=True):
    """The GPU path and memory of ``result`` (a :class:`~matndp.sim.batch.run.BatchResult` with the
    ``gpu_requests``, ``mem_requests`` and ``gpu_responses`` logs) against the stimulus and
    the memory model. ``complete``: every request was sent and every read answered."""
    job = result.job
    config = job.config
    stimulus = job.requests().columns()
    stimulus["write"] = stimulus["write"].astype(np.uint64)
    total = len(stimulus["addr"])

    taken = result.log("gpu_requests")
    sent = len(taken["cycle"])
    if complete and sent != total:
        raise CheckFailed(f"the slice took {sent} of the {total} GPU requests")
    if sent > total:
        raise CheckFailed(f"the slice took {sent} GPU requests; the stimulus has {total}")
    expected = {name: stimulus[name][:sent] for name in _FIELDS}
    _first_difference("GPU requests taken by the slice", taken, expected)

    memory = result.log("mem_requests")
    source_bit = np.uint64(config.mem_id_width - 1)
    from_gpu = (memory["id"] >> source_bit) == 0
    gpu_rows = np.flatnonzero(from_gpu)
    if len(gpu_rows) != sent and complete:
        raise CheckFailed(f"memory saw {len(gpu_rows)} GPU requests; the slice took {sent}")
    if len(gpu_rows) > sent:
        raise CheckFailed(f"memory saw {len(gpu_rows)} GPU requests; the slice took only {sent}")
    seen = {name: memory[name][gpu_rows] for name in _FIELDS}
    _first_difference("GPU requests at memory (in order, unchanged)", seen,
                      {name: expected[name][:len(gpu_rows)] for name in _FIELDS})

    # The memory model over the order memory accepted everything in (GPU and engine).
    read_data = np.zeros((len(memory["addr"]), config.sector_bytes), dtype=np.uint8)
    status = np.zeros(len(memory["addr"]), dtype=np.uint64)
    segments = _segments(result, memory["cycle"])

    def replay(rows, key):
        picked = np.flatnonzero(rows)
        return picked, replay_memory(job.layouts[key], job.images[key], memory["addr"][picked],
                                     memory["write"][picked], memory["data"][picked],
                                     memory["mask"][picked])
    for rows, key in segments:
        picked, (data, answer, _) = replay(rows, key)
        read_data[picked] = data
        status[picked] = answer

    # Responses: the k-th response with id X answers the k-th GPU read with id X.
    reads = gpu_rows[memory["write"][gpu_rows] == 0]
    responses = result.log("gpu_responses")
    answered = len(responses["cycle"])
    if complete and answered != len(reads):
        raise CheckFailed(f"{answered} GPU responses for {len(reads)} GPU reads")
    read_ids = memory["id"][reads] & np.uint64((1 << config.id_width) - 1)
    paired = _pair(read_ids, responses["id"])
    if np.any(paired < 0):
        row = int(np.flatnonzero(paired < 0)[0])
        raise CheckFailed(f"GPU response {row} (id {int(responses['id'][row])}) answers no "
                          f"outstanding read: a duplicate or a response with a wrong id",
                          int(responses["cycle"][row]))
    matched = reads[paired]
    _first_difference("GPU response data and status against the memory model", responses,
                      {"data": read_data[matched], "status": status[matched]})
    early = responses["cycle"] <= memory["cycle"][matched]
    if early.any():
        row = int(np.flatnonzero(early)[0])
        raise CheckFailed(f"GPU response {row} came in cycle {int(responses['cycle'][row])}, "
                          f"before memory took its read", int(responses["cycle"][row]))

    dumps = 0
    for step in job.steps:
        if step["kind"] != "dump":
            continue
        rows = next(rows for rows, key in segments if key == step["layout"])
        rows = rows & (memory["cycle"] < result.results[step["key"]]["cycle"])
        _, (_, _, final) = replay(rows, step["layout"])
        dumped = result.image(step["key"]).sectors
        differs = (dumped != final).any(axis=1)
        if differs.any():
            row = int(np.flatnonzero(differs)[0])
            raise CheckFailed(f"dumped memory differs from the memory model first in image sector "
                              f"{row}: {_show(dumped[row])} != {_show(final[row])} (model)")
        dumps += 1
    return {"gpu_requests": sent, "gpu_reads_answered": answered,
            "memory_requests": len(memory["addr"]),
            "engine_requests": int((~from_gpu).sum()), "dumps_checked": dumps}


def _occurrence_keys(ids):
    """``id * 2^32 + k`` for the k-th occurrence of each id."""
    ids = np.asarray(ids, dtype=np.uint64)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    positions = np.arange(len(ids))
    starts = np.concatenate([[True], sorted_ids[1:] != sorted_ids[:-1]]) if len(ids) else np.zeros(0, bool)
    first = np.maximum.accumulate(np.where(starts, positions, 0)) if len(ids) else positions
    rank = np.empty(len(ids), dtype=np.uint64)
    rank[order] = (positions - first).astype(np.uint64)
    return ids * np.uint64(1 << 32) + rank


def _pair(read_ids, response_ids):
    """For each response, the read it answers (the k-th response with an id answers the
    k-th read with it), by position in ``read_ids``; -1 where there is none."""
    reads = _occurrence_keys(read_ids)
    wanted = _occurrence_keys(response_ids)
    order = np.argsort(reads, kind="stable")
    ordered = reads[order]
    position = np.minimum(np.searchsorted(ordered, wanted), max(len(ordered) - 1, 0))
    if not len(ordered):
        return np.full(len(wanted), -1, dtype=np.int64)
    return np.where(ordered[position] == wanted, order[position], -1).astype(np.int64)


def matching_entries(entries, addr, write):
    """The filter index each access triggers (-1: none), lowest index first, the rule of
    docs/trigger.md: ``entries`` maps index to :class:`~matndp.host.runtime.FilterRange`."""
    found = np.full(len(addr), -1, dtype=np.int64)
    write = np.asarray(write).astype(bool)
    for index in sorted(entries, reverse=True):
        entry = entries[index]
        if not isinstance(entry, FilterRange):
            raise TypeError(f"entry {index}: expected a FilterRange, not {entry!r}")
        inside = (addr >= np.uint64(entry.base)) & (addr < np.uint64(entry.end))
        direction = np.where(write, entry.on_write, entry.on_read)
        found = np.where(inside & direction, index, found)
    return found


def _entries_in_force(entries, taken):
    """Per GPU request taken, the entry it triggers (-1: none) and that entry's base.
    ``entries``: {index: FilterRange}, or a timeline of ``(first cycle, {index:
    FilterRange})`` in cycle order, each in force from its cycle until the next."""
    if isinstance(entries, dict):
        entries = [(0, entries)]
    entry = np.full(len(taken["addr"]), -1, dtype=np.int64)
    base = np.zeros(len(taken["addr"]), dtype=np.uint64)
    starts = [cycle for cycle, _ in entries]
    if starts != sorted(starts):
        raise ValueError("the timeline of entries is not in cycle order")
    for number, (cycle, in_force) in enumerate(entries):
        rows = taken["cycle"] >= np.uint64(cycle)
        if number + 1 < len(entries):
            rows &= taken["cycle"] < np.uint64(entries[number + 1][0])
        rows = np.flatnonzero(rows)
        found = matching_entries(in_force, taken["addr"][rows], taken["write"][rows])
        entry[rows] = found
        for index, programmed in in_force.items():
            base[rows[found == index]] = programmed.base
    return entry, base


def check_events(result, entries=None):
    """The events the engine took (the ``events`` log) against the accesses in the
    programmed ranges (``entries``, default the job's :meth:`~matndp.sim.batch.job.BatchJob.program`
    calls; or a timeline of them, see :func:`_entries_in_force`): write events in GPU
    request order with the write's data and mask, read events in GPU response order with
    the returned data and the read's mask."""
    job = result.job
    entries = job.entries if entries is None else entries
    taken = result.log("gpu_requests")
    events = result.log("events")
    entry, base = _entries_in_force(entries, taken)

    writes = np.flatnonzero((entry >= 0) & (taken["write"] == 1))
    expected_writes = {"entry": entry[writes].astype(np.uint64), "addr": taken["addr"][writes],
                       "offset": taken["addr"][writes] - base[writes], "data": taken["data"][writes],
                       "mask": taken["mask"][writes]}
    is_write = events["write"] == 1
    got_writes = {name: events[name][is_write] for name in [*expected_writes, "cycle"]}
    if len(got_writes["addr"]) != len(writes):
        raise CheckFailed(f"{len(got_writes['addr'])} write events; the programmed ranges hold "
                          f"{len(writes)} of the GPU's writes")
    _first_difference("write events (in request order)", got_writes, expected_writes)

    # Read events follow the responses: pair each response with its read, as the GPU path does.
    reads = np.flatnonzero(taken["write"] == 0)
    responses = result.log("gpu_responses")
    paired = _pair(taken["id"][reads], responses["id"])
    if np.any(paired < 0):
        raise CheckFailed("a GPU response answers no read (see check_gpu_path)")
    answered = reads[paired]
    triggering = entry[answered] >= 0
    rows = answered[triggering]
    expected_reads = {"entry": entry[rows].astype(np.uint64), "addr": taken["addr"][rows],
                      "offset": taken["addr"][rows] - base[rows],
                      "data": responses["data"][triggering], "mask": taken["mask"][rows]}
    got_reads = {name: events[name][~is_write] for name in [*expected_reads, "cycle"]}
    if len(got_reads["addr"]) != len(rows):
        raise CheckFailed(f"{len(got_reads['addr'])} read events; {len(rows)} answered GPU reads "
                          f"lie in the programmed ranges")
    _first_difference("read events (in response order)", got_reads, expected_reads)
    return {"write_events": len(writes), "read_events": len(rows)}
