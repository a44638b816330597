"""Check an executed run from its event log alone, for any policy: HBM capacity never
exceeded at any instant, every op finds all its tensors entirely in HBM, and bytes are
conserved (a page leaves HBM only if flash holds or receives a valid copy of it; a page is
fetched only if it is absent from HBM). Returns the traffic totals the log implies, to be
compared with the executor's own counters."""

from .events import EventKind


__all__ = ["TraceError", "check_trace"]


class TraceError(AssertionError):
    """A tiering trace broke a rule of the memory (an op ran on a tensor not resident, HBM
    over capacity, a transfer of pages that were not there)."""


def check_trace(log, lifetimes, capacity_pages):
    """Raise :class:`TraceError` at the first :class:`~host.tier.events.TraceEvent` of
    ``log`` that breaks a rule; return the totals (``ops``, ``to_flash_pages``,
    ``from_flash_pages``, ``peak_pages``)."""
    size = [int(p) for p in lifetimes.pages]
    n_tensors = len(size)
    hbm = [0] * n_tensors          # pages occupying HBM (incl. arriving and leaving)
    usable = [0] * n_tensors       # pages present and not leaving
    arriving = [0] * n_tensors
    leaving = [0] * n_tensors
    valid = [0] * n_tensors        # tail pages with a valid flash copy
    used = 0
    peak = 0
    last_time = float("-inf")
    written_pages = 0
    read_pages = 0
    ops = 0
    names = lifetimes.tensor_ids

    def fail(message):
        subject = f"op {event.slot}" if kind is EventKind.OP else names[tensor]
        raise TraceError(f"t={event.time_s:.9f}s {kind.value} {subject}: {message}")

    for event in log:
        kind, tensor, pages = event.kind, event.tensor, event.pages
        if event.time_s < last_time - 1e-12:
            fail(f"time goes backwards from {last_time}")
        last_time = event.time_s
        if kind is EventKind.INIT:
            hbm[tensor] = usable[tensor] = pages
            valid[tensor] = event.valid
            used += pages
        elif kind is EventKind.ALLOC:
            if hbm[tensor]:
                fail("allocated while already in HBM")
            hbm[tensor] = usable[tensor] = pages
            valid[tensor] = 0
            used += pages
        elif kind is EventKind.FREE:
            if arriving[tensor] or leaving[tensor] or pages != hbm[tensor]:
                fail("freed with transfers in flight or a wrong page count")
            used -= pages
            hbm[tensor] = usable[tensor] = valid[tensor] = 0
        elif kind is EventKind.EVICT_BEGIN:
            dirty = event.dirty
            if not 0 <= dirty <= pages <= usable[tensor]:
                fail(f"evicts {pages} pages ({dirty} dirty) with {usable[tensor]} usable")
            usable[tensor] -= pages
            leaving[tensor] += pages
            out = size[tensor] - usable[tensor] - arriving[tensor]
            if valid[tensor] + dirty < out:
                fail(f"{out} pages out of HBM but only {valid[tensor] + dirty} have a flash copy")
            valid[tensor] = max(valid[tensor], out)
            written_pages += dirty
        elif kind is EventKind.EVICT_END:
            if pages > leaving[tensor]:
                fail("more pages left than were leaving")
            leaving[tensor] -= pages
            hbm[tensor] -= pages
            used -= pages
        elif kind is EventKind.FETCH_BEGIN:
            if pages > size[tensor] - hbm[tensor]:
                fail(f"fetches {pages} pages, only {size[tensor] - hbm[tensor]} absent")
            hbm[tensor] += pages
            arriving[tensor] += pages
            used += pages
            read_pages += pages
        elif kind is EventKind.FETCH_END:
            if pages > arriving[tensor]:
                fail("more pages arrived than were requested")
            arriving[tensor] -= pages
            usable[tensor] += pages
        elif kind is EventKind.OP:
            ops += 1
            slot = event.slot
            for k in lifetimes.working_set[slot]:
                if usable[k] != size[k] or arriving[k] or leaving[k]:
                    raise TraceError(f"t={event.time_s:.9f}s op {lifetimes.graph.ops[slot].name!r} "
                                     f"starts with {names[k]} at {usable[k]}/{size[k]} pages in HBM")
            for k in lifetimes.writes[slot]:
                valid[k] = 0
        else:
            raise TraceError(f"t={event.time_s:.9f}s: unknown event {kind!r}")
        if used > capacity_pages:
            fail(f"HBM holds {used} pages, capacity {capacity_pages}")
        peak = max(peak, used)
    return {"ops": ops, "to_flash_pages": written_pages, "from_flash_pages": read_pages,
            "peak_pages": peak}
