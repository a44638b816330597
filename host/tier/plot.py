"""Plots of tiering runs: HBM occupancy over an iteration, traffic per policy, sweeps."""

from ..output import pyplot as _pyplot, save_figure
from ..units import format_seconds


__all__ = ["plot_run", "plot_sweep"]

GB = 1e9


def plot_run(run, traffic_by_policy, path):
    """Left: HBM occupancy over the reported iteration with the capacity. Right: bytes
    each way between the tiers for every policy of ``traffic_by_policy`` (policy -> metrics)."""
    plt = _pyplot()
    record = run.records[-1]
    page = run.lifetimes.page_bytes
    times = [(sample.time_s - record.start_s) * 1e3 for sample in record.occupancy]
    used = [sample.pages * page / GB for sample in record.occupancy]
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [2, 1]})
    left.step(times, used, where="post", lw=1, label=f"HBM in use ({run.policy})")
    # The GPU waits for transfers before an op: occupancy holds a sample as each op starts
    # (after its wait) and as it ends, so op i starts at sample 2i + 1.
    stalls = [((record.occupancy[2 * slot + 1].time_s - record.start_s - wait) * 1e3, wait * 1e3)
              for slot, wait in enumerate(record.stall_by_boundary) if wait > 0]
    if stalls:
        left.broken_barh(stalls, (0, 1), transform=left.get_xaxis_transform(),
                         facecolors="tab:red", alpha=0.25, linewidth=0, label=f"GPU stalled, waiting for transfers "
                                            f"({format_seconds(record.stall_s)})")
    left.axhline(run.capacity_pages * page / GB, color="k", ls="--", lw=1, label="HBM capacity")
    left.axhline(run.lifetimes.footprint_bytes / GB, color="gray", ls=":", lw=1,
                 label="footprint (all resident)")
    left.set_xlabel("time in iteration (ms)")
    left.set_ylabel("GB")
    metrics = run.metrics
    left.set_title(f"{metrics.get('model', run.lifetimes.graph.name)}: tier occupancy; iteration "
                   f"{format_seconds(record.end_s - record.start_s)}, of it stalled "
                   f"{format_seconds(record.stall_s)}", fontsize=10)
    left.legend(loc="best", fontsize=8)
    policies = list(traffic_by_policy)
    out = [traffic_by_policy[p]["hbm_to_flash_bytes"] / GB for p in policies]
    back = [traffic_by_policy[p]["flash_to_hbm_bytes"] / GB for p in policies]
    right.bar(policies, out, label="HBM → flash")
    right.bar(policies, back, bottom=out, label="flash → HBM")
    right.set_ylabel("inter-tier GB per iteration")
    right.set_title("traffic per policy")
    if "gpu" in metrics:
        figure.suptitle(_setup(metrics), fontsize=10)
    right.legend(fontsize=8)
    return save_figure(figure, path)


def _setup(metrics):
    """The machine a run is for, as a title: GPU, batch, dtype, flash."""
    devices = metrics.get("flash_devices", 1)
    return (f"{metrics['gpu'].upper()}, batch {metrics['batch']}, {metrics.get('dtype', 'fp32')}; "
            f"flash {metrics['flash']}" + (f" x {devices}" if devices != 1 else "")
            + f", link {metrics['link_gbs']:g} GB/s")


def plot_sweep(rows, path):
    """Per model: inter-tier traffic and throughput per watt against HBM fraction."""
    plt = _pyplot()
    rows = [r for r in rows if "infeasible" not in r]
    models = list(dict.fromkeys(r["model"] for r in rows))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    figure, axes = plt.subplots(len(models), 2, figsize=(11, 3.2 * len(models) + 0.4), squeeze=False)
    if rows and "gpu" in rows[0]:
        figure.suptitle(_setup(rows[0]), fontsize=10)
    for row_axes, model in zip(axes, models):
        for policy in policies:
            points = sorted((r["hbm_fraction"], r) for r in rows
                            if r["model"] == model and r["policy"] == policy)
            if not points:
                continue
            x = [f * 100 for f, _ in points]
            row_axes[0].plot(x, [r["inter_tier_bytes"] / GB for _, r in points], "o-", label=policy)
            row_axes[1].plot(x, [r["throughput_per_watt"] for _, r in points], "o-", label=policy)
        row_axes[0].set_title(f"{model}: inter-tier traffic")
        row_axes[0].set_ylabel("GB per iteration")
        row_axes[1].set_title(f"{model}: throughput per watt")
        row_axes[1].set_ylabel("samples / J")
        row_axes[1].set_yscale("log")         # ideal sits far above the tiered policies
        percents = sorted({r["hbm_fraction"] * 100 for r in rows if r["model"] == model})
        for ax in row_axes:
            ax.set_xscale("log", base=2)
            ax.set_xticks(percents, [f"{p:g}" for p in percents])
            ax.minorticks_off()
            ax.set_xlabel("HBM capacity (% of footprint)")
            ax.legend(fontsize=8)
    return save_figure(figure, path)
