"""Plots of a matNDP run: the timeline of baseline GPU, matNDP GPU and NDP, and the time
per op kind both ways."""

from collections import defaultdict

from .offload import Busy, OnTheFly
from .output import pyplot, save_figure


__all__ = ["plot_run"]


def _rows(intervals, kind_of):
    by_kind = defaultdict(list)
    for busy in intervals:
        by_kind[kind_of[busy.op]].append((busy.start_s * 1e3, (busy.end_s - busy.start_s) * 1e3))
    return by_kind


def plot_run(plan, report, path):
    """Write the timeline (baseline GPU, matNDP GPU, NDP on the fly, NDP standalone) and the
    time per op kind of ``plan`` to the image ``path``; returns the path written."""
    plt = pyplot()
    kind_of = {op.name: op.kind for op in plan.graph.ops}
    kinds = sorted({op.kind for op in plan.graph.ops})
    colors = {kind: plt.get_cmap("tab10")(i % 10) for i, kind in enumerate(kinds)}
    baseline = [Busy(e.start_s, e.end_s, e.op) for e in plan.baseline]
    on_the_fly = [Busy(e.start_s, e.end_s, e.op) for e in plan.schedule
                  if e.where == OnTheFly.where]
    rows = [("GPU baseline", baseline), ("GPU matNDP", plan.gpu_busy),
            ("NDP on the fly", on_the_fly), ("NDP standalone", plan.ndp_busy)]

    figure, (timeline, bars) = plt.subplots(2, 1, figsize=(11, 7.5),
                                            gridspec_kw={"height_ratios": [1.1, 1]})
    for row, (_, intervals) in enumerate(rows):
        for kind, spans in _rows(intervals, kind_of).items():
            timeline.broken_barh(spans, (row - 0.4, 0.8), facecolors=colors[kind],
                                 linewidth=0)
    timeline.set_yticks(range(len(rows)), [label for label, _ in rows])
    timeline.invert_yaxis()
    timeline.set_xlabel("time (ms)")
    timeline.set_title(f"{report['model']} batch {report['batch']} {report['dtype']} on "
                       f"{report['gpu'].upper()}: baseline {report['baseline_s'] * 1e3:.2f} ms, "
                       f"matNDP {report['matndp_s'] * 1e3:.2f} ms "
                       f"({report['speedup']:.2f}x; calibration: "
                       f"{report['calibration']['source']})", fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[k]) for k in kinds]
    timeline.legend(handles, kinds, ncol=min(6, len(kinds)), fontsize=7, loc="lower right")

    table = report["breakdown"]
    names = list(table)
    x = range(len(names))
    width = 0.28
    bars.bar([i - width for i in x], [table[n]["baseline_s"] * 1e3 for n in names], width,
             label="baseline GPU")
    bars.bar(list(x), [table[n]["matndp_gpu_s"] * 1e3 for n in names], width,
             label="matNDP GPU (longer where NDP kernels ride on the op's writes)")
    bars.bar([i + width for i in x], [table[n]["matndp_ndp_s"] * 1e3 for n in names], width,
             label="matNDP NDP standalone (overlapped)")
    bars.set_xticks(list(x), names, rotation=20, fontsize=8)
    bars.set_ylabel("time (ms)")
    bars.legend(fontsize=8)
    return save_figure(figure, path, dpi=110)
