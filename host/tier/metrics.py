"""Metrics of one executed iteration: traffic, time, energy, throughput per watt, cost.

Energy reuses the host model's constants (:class:`host.energy.EnergyConstants`): HBM
device energy plus the GPU-side transport for every byte that enters or leaves HBM (the
ops' own traffic and the inter-tier transfers), arithmetic per FLOP, and GPU static power
over the whole iteration (stalls included). Link and flash energies are the tier's own.
"""

from ..energy import EnergyConstants, PJ, gpu_compute_j


__all__ = ["iteration_metrics"]

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
