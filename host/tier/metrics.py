"""Metrics of one executed iteration: traffic, time, energy, throughput per watt, cost.

Energy reuses the host model's constants (:class:`host.energy.EnergyConstants`): HBM
device energy plus the GPU-side transport for every byte that enters or leaves HBM (the
ops' own traffic and the inter-tier transfers), arithmetic per FLOP, and GPU static power
over the whole iteration (stalls included). Link and flash energies are the tier's own.
"""

import numpy as np

from ..energy import EnergyConstants, PJ, gpu_compute_j


__all__ = ["iteration_metrics", "time_breakdown"]

GB = 1e9


def iteration_metrics(record, *, graph, lifetimes, tier, flash_config, capacity_pages,
                      gpu, uses_flash, constants=None):
    constants = constants or EnergyConstants()
    page = lifetimes.page_bytes
    counters = record.counters
    to_flash = counters["to_flash_pages"] * page
    from_flash = counters["from_flash_pages"] * page
    to_host = counters.get("to_host_pages", 0) * page
    from_host = counters.get("from_host_pages", 0) * page
    inter_tier = to_flash + from_flash + to_host + from_host
    iteration_s = record.end_s - record.start_s
    op_bytes = sum(graph.op_bytes(op) for op in graph.ops)
    hbm_pj_per_bit = constants.dram_pj_per_bit + constants.gpu_transport_pj_per_bit
    energy = {
        "gpu_arithmetic_j": gpu_compute_j(graph, graph.ops, constants),
        "gpu_static_j": gpu.tdp_w * constants.gpu_static_fraction_of_tdp * iteration_s,
        "hbm_j": (op_bytes + inter_tier) * 8 * hbm_pj_per_bit * PJ,
        "link_j": inter_tier * tier.link_j_per_byte,
        "flash_j": record.flash["energy_j"],
    }
    energy_j = sum(energy.values())
    batch = graph.batch
    hbm_bytes = capacity_pages * page
    flash_bytes = lifetimes.footprint_bytes if uses_flash else 0
    host_bytes = tier.host_bytes
    return {
        "inter_tier_bytes": inter_tier,
        "hbm_to_host_bytes": to_host,
        "host_to_hbm_bytes": from_host,
        "fault_batches": counters.get("fault_batches", 0),
        "host_capacity_bytes": host_bytes,
        "hbm_to_flash_bytes": to_flash,
        "flash_to_hbm_bytes": from_flash,
        "flash_read_bytes": from_flash,
        "flash_write_bytes": to_flash,
        "flash_page_reads": record.flash["page_reads"],
        "flash_page_programs": record.flash["page_programs"],
        "demand_fetch_bytes": counters["demand_fetch_pages"] * page,
        "demand_evict_bytes": counters["demand_evict_pages"] * page,
        "faults": counters["faults"],
        "compute_s": record.compute_s,
        "stall_s": record.stall_s,
        "iteration_s": iteration_s,
        "samples_per_s": batch / iteration_s,
        "energy_j": energy_j,
        "energy_breakdown_j": energy,
        "average_power_w": energy_j / iteration_s,
        # (samples / s) / W = samples per joule.
        "throughput_per_watt": batch / energy_j,
        "hbm_capacity_bytes": hbm_bytes,
        "hbm_peak_bytes": counters["peak_pages"] * page,
        "footprint_bytes": lifetimes.footprint_bytes,
        "memory_cost_usd": hbm_bytes / GB * tier.hbm_cost_usd_per_gb
                           + flash_bytes / GB * flash_config.cost_usd_per_gb
                           + host_bytes / GB * tier.host_cost_usd_per_gb,
    }


def time_breakdown(log, record, op_times):
    """The iteration's time split as G10 splits it: per op, the span from the end of the
    previous op to its own end (the stall before it included) is ``compute`` where no
    transfer is in flight, ``overlap`` where its own compute time runs beside transfers,
    and ``stall`` beyond its compute time: compute = span - busy, overlap = busy + op time -
    span (when positive), stall = span - op time (plus any negative overlap). Transfers are
    in flight from a begin event to the matching end (pages still travelling), read off the
    executor's event log. Returns seconds ``{"compute", "overlap", "stall"}``."""
    from .events import EventKind
    begin = {EventKind.EVICT_BEGIN: 1, EventKind.FETCH_BEGIN: 1,
             EventKind.EVICT_END: -1, EventKind.FETCH_END: -1}
    # Busy intervals: while pages are leaving or arriving anywhere.
    busy, travelling, since = [], 0, None
    starts = {}
    for event in log:
        if event.time_s < record.start_s - 1e-12 or event.time_s > record.end_s + 1e-12:
            if event.kind in begin:
                travelling += begin[event.kind] * event.pages
            continue
        if event.kind is EventKind.OP:
            starts[event.slot] = event.time_s
            continue
        sign = begin.get(event.kind)
        if sign is None:
            continue
        before = travelling
        travelling += sign * event.pages
        if before <= 0 < travelling:
            since = event.time_s
        elif before > 0 >= travelling and since is not None:
            busy.append((since, event.time_s))
            since = None
    if travelling > 0:
        busy.append((record.start_s if since is None else since, record.end_s))
    busy_start = np.array([a for a, _ in busy])
    busy_end = np.array([b for _, b in busy])
    totals = {"compute": 0.0, "overlap": 0.0, "stall": 0.0}
    for slot, op_start in starts.items():
        ideal = float(op_times[slot])
        span_start = op_start - float(record.stall_by_boundary[slot])
        span_end = op_start + ideal
        covered = float(np.clip(np.minimum(busy_end, span_end) - np.maximum(busy_start, span_start),
                                0, None).sum()) if len(busy) else 0.0
        span = span_end - span_start
        overlap = covered + ideal - span
        # The stall before the op as recorded, not span - ideal: that difference of
        # rounded times comes out a hair below zero for an op that never stalled.
        stall = float(record.stall_by_boundary[slot])
        if overlap < 0:
            stall -= overlap
            overlap = 0.0
        totals["compute"] += span - covered
        totals["overlap"] += overlap
        totals["stall"] += stall
    return totals
