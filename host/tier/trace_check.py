"""Check an executed run from its event log alone, for any policy: HBM capacity never
exceeded at any instant, every op finds all its tensors entirely in HBM, and bytes are
conserved (a page leaves HBM only if flash holds or receives a valid copy of it; a page is
fetched only if it is absent from HBM). Returns the traffic totals the log implies, to be
compared with the executor's own counters."""


__all__ = ["TraceError", "check_trace"]


class TraceError(AssertionError):
    pass


def check_trace(log, lifetimes, capacity_pages):
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
        raise TraceError(f"t={when:.9f}s {kind} {names[tensor] if kind != 'op' else tensor}: {message}")

    for when, kind, tensor, pages, extra in log:
        if when < last_time - 1e-12:
            fail(f"time goes backwards from {last_time}")
        last_time = when
        if kind == "init":
            hbm[tensor] = usable[tensor] = pages
            valid[tensor] = extra
            used += pages
        elif kind == "alloc":
            if hbm[tensor]:
                fail("allocated while already in HBM")
            hbm[tensor] = usable[tensor] = pages
            valid[tensor] = 0
            used += pages
        elif kind == "free":
            if arriving[tensor] or leaving[tensor] or pages != hbm[tensor]:
                fail("freed with transfers in flight or a wrong page count")
            used -= pages
            hbm[tensor] = usable[tensor] = valid[tensor] = 0
        elif kind == "evict_begin":
            dirty = extra
            if not 0 <= dirty <= pages <= usable[tensor]:
                fail(f"evicts {pages} pages ({dirty} dirty) with {usable[tensor]} usable")
            usable[tensor] -= pages
            leaving[tensor] += pages
            out = size[tensor] - usable[tensor] - arriving[tensor]
            if valid[tensor] + dirty < out:
                fail(f"{out} pages out of HBM but only {valid[tensor] + dirty} have a flash copy")
            valid[tensor] = max(valid[tensor], out)
            written_pages += dirty
        elif kind == "evict_end":
            if pages > leaving[tensor]:
                fail("more pages left than were leaving")
            leaving[tensor] -= pages
            hbm[tensor] -= pages
            used -= pages
        elif kind == "fetch_begin":
            if pages > size[tensor] - hbm[tensor]:
                fail(f"fetches {pages} pages, only {size[tensor] - hbm[tensor]} absent")
            hbm[tensor] += pages
            arriving[tensor] += pages
            used += pages
            read_pages += pages
        elif kind == "fetch_end":
            if pages > arriving[tensor]:
                fail("more pages arrived than were requested")
            arriving[tensor] -= pages
            usable[tensor] += pages
        elif kind == "op":
            ops += 1
            slot = tensor
            for k in lifetimes.working_set[slot]:
                if usable[k] != size[k] or arriving[k] or leaving[k]:
                    raise TraceError(f"t={when:.9f}s op {lifetimes.graph.ops[slot].name!r} starts "
                                     f"with {names[k]} at {usable[k]}/{size[k]} pages in HBM")
            for k in lifetimes.writes[slot]:
                valid[k] = 0
        else:
            fail("unknown event")
        if used > capacity_pages:
            fail(f"HBM holds {used} pages, capacity {capacity_pages}")
        peak = max(peak, used)
    return {"ops": ops, "to_flash_pages": written_pages, "from_flash_pages": read_pages,
            "peak_pages": peak}
