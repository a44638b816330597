"""Check an executed run from its event log alone, for any policy: HBM capacity never
exceeded at any instant, every op finds all its tensors entirely in HBM, and bytes are
conserved (a page leaves HBM only if flash holds or receives a valid copy of it, or it
moves to host DRAM; a page is fetched only if it is absent from HBM, and from host DRAM
only if it is there). With a host-DRAM tier also: host capacity never exceeded, and no
page in two tiers at once (usable or arriving in HBM, or held in host DRAM). Returns the
traffic totals the log implies, to be compared with the executor's own counters."""

from .events import EventKind


__all__ = ["TraceError", "check_trace"]


class TraceError(AssertionError):
    """A tiering trace broke a rule of the memory (an op ran on a tensor not resident, HBM
    over capacity, a transfer of pages that were not there)."""


def check_trace(log, lifetimes, capacity_pages, host_capacity_pages=0):
    """Raise :class:`TraceError` at the first :class:`~host.tier.events.TraceEvent` of
    ``log`` that breaks a rule; return the totals (``ops``, ``to_flash_pages``,
    ``from_flash_pages``, ``to_host_pages``, ``from_host_pages``, ``peak_pages``,
    ``host_peak_pages``)."""
    size = [int(p) for p in lifetimes.pages]
    n_tensors = len(size)
    hbm = [0] * n_tensors          # pages occupying HBM (incl. arriving and leaving)
    usable = [0] * n_tensors       # pages present and not leaving
    arriving = [0] * n_tensors
    leaving = [0] * n_tensors
    valid = [0] * n_tensors        # tail pages with a valid flash copy
    host = [0] * n_tensors         # pages held in host DRAM (arriving there included)
    dropped = [0] * n_tensors      # pages of a dead tensor discarded, nowhere until reallocated
    host_used = 0
    host_peak = 0
    to_host = from_host = 0
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
            host[tensor] = event.host
            host_used += event.host
            used += pages
        elif kind is EventKind.ALLOC and dropped[tensor]:
            if pages > dropped[tensor]:
                fail(f"reallocates {pages} pages, {dropped[tensor]} were dropped")
            dropped[tensor] -= pages
            hbm[tensor] += pages
            usable[tensor] += pages
            used += pages
        elif kind is EventKind.DROP:
            if pages > usable[tensor]:
                fail(f"drops {pages} pages with {usable[tensor]} usable")
            usable[tensor] -= pages
            hbm[tensor] -= pages
            dropped[tensor] += pages
            used -= pages
        elif kind is EventKind.ALLOC:
            if hbm[tensor]:
                fail("allocated while already in HBM")
            hbm[tensor] = usable[tensor] = pages
            valid[tensor] = 0
            used += pages
        elif kind is EventKind.FREE:
            if arriving[tensor] or leaving[tensor] or pages != hbm[tensor]:
                fail("freed with transfers in flight or a wrong page count")
            host_used -= host[tensor]
            host[tensor] = 0
            used -= pages
            hbm[tensor] = usable[tensor] = valid[tensor] = 0
        elif kind is EventKind.EVICT_BEGIN:
            dirty = event.dirty
            if not 0 <= event.host <= dirty <= pages <= usable[tensor]:
                fail(f"evicts {pages} pages ({dirty} dirty, {event.host} to host DRAM) "
                     f"with {usable[tensor]} usable")
            usable[tensor] -= pages
            leaving[tensor] += pages
            out = size[tensor] - usable[tensor] - arriving[tensor] - dropped[tensor]
            if valid[tensor] + dirty + host[tensor] < out:
                elsewhere = " or a place in host DRAM" if host[tensor] or event.host else ""
                fail(f"{out} pages out of HBM but only {valid[tensor] + dirty + host[tensor]} "
                     f"have a flash copy{elsewhere}")
            host[tensor] += event.host
            host_used += event.host
            to_host += event.host
            valid[tensor] = max(valid[tensor], out - host[tensor])
            written_pages += dirty - event.host
        elif kind is EventKind.EVICT_END:
            if pages > leaving[tensor]:
                fail("more pages left than were leaving")
            leaving[tensor] -= pages
            hbm[tensor] -= pages
            used -= pages
        elif kind is EventKind.FETCH_BEGIN:
            if pages > size[tensor] - hbm[tensor] - dropped[tensor]:
                fail(f"fetches {pages} pages, only {size[tensor] - hbm[tensor] - dropped[tensor]} "
                     "absent with a copy elsewhere")
            if not 0 <= event.host <= min(pages, host[tensor]):
                fail(f"fetches {event.host} pages from host DRAM, which holds {host[tensor]}")
            host[tensor] -= event.host
            host_used -= event.host
            from_host += event.host
            read_pages -= event.host
            hbm[tensor] += pages
            arriving[tensor] += pages
            used += pages
            read_pages += pages
        elif kind is EventKind.FETCH_END:
            if pages > arriving[tensor]:
                fail("more pages arrived than were requested")
            arriving[tensor] -= pages
            usable[tensor] += pages
        elif kind is EventKind.DEMOTE:
            if not 0 < pages <= host[tensor]:
                fail(f"demotes {pages} pages from host DRAM, which holds {host[tensor]}")
            host[tensor] -= pages
            host_used -= pages
            valid[tensor] += pages
            written_pages += pages
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
        if host_used > host_capacity_pages:
            fail(f"host DRAM holds {host_used} pages, capacity {host_capacity_pages}")
        if tensor is not None and usable[tensor] + arriving[tensor] + host[tensor] > size[tensor]:
            fail(f"{usable[tensor] + arriving[tensor]} pages in HBM and {host[tensor]} in host "
                 f"DRAM of a {size[tensor]}-page tensor: a page in two tiers")
        peak = max(peak, used)
        host_peak = max(host_peak, host_used)
    return {"ops": ops, "to_flash_pages": written_pages, "from_flash_pages": read_pages,
            "to_host_pages": to_host, "from_host_pages": from_host, "peak_pages": peak,
            "host_peak_pages": host_peak}
