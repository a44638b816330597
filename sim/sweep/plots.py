"""The summary plot of a sweep, written beside its output.

One panel per headline result of the point function, against the first axis of the
specification (numeric or by name); one line per combination of the other axes, the mean
over seeds with their range as error bars. The title names the point function and the
fixed parameters. Failed points leave gaps.
"""

from collections import defaultdict
import pathlib

from matndp.host.output import pyplot, save_figure


__all__ = ["summary_plot_path", "plot_summary"]

_MAX_LABELLED_SERIES = 12


def summary_plot_path(output):
    output = pathlib.Path(output)
    return output.with_name(output.stem + ".png")


def _numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _label(value):
    return "none" if value is None else str(value)


def plot_summary(spec, lines, path):
    from matndp.sim.sweep.registry import POINT_FUNCTIONS
    function = POINT_FUNCTIONS[spec.function]
    plt = pyplot()
    axes = list(spec.axes)
    x_name = axes[0] if axes else None
    x_values = list(spec.axes[x_name]) if x_name else [None]
    numeric_x = x_name is not None and _numeric(x_values)
    others = axes[1:]
    metrics = function.headline
    figure, panels = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.8),
                                  squeeze=False)
    # series -> x -> values over seeds
    series = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for line in lines:
        if line["status"] != "ok":
            continue
        key = tuple(line["config"][name] for name in others)
        x = line["config"][x_name] if x_name else None
        for metric in metrics:
            value = line["results"].get(metric)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                series[key][metric][_label(x) if not numeric_x else x].append(value)
    positions = None if numeric_x else {_label(x): i for i, x in enumerate(x_values)}
    for panel, metric in zip(panels[0], metrics):
        for key, by_metric in series.items():
            points = by_metric[metric]
            xs = [x for x in (x_values if numeric_x else map(_label, x_values)) if x in points]
            if not xs:
                continue
            means = [sum(points[x]) / len(points[x]) for x in xs]
            # The mean of equal values can round an ulp past them; the bars are then zero.
            low = [max(0.0, m - min(points[x])) for m, x in zip(means, xs)]
            high = [max(0.0, max(points[x]) - m) for m, x in zip(means, xs)]
            label = ", ".join(f"{name}={_label(v)}" for name, v in zip(others, key)) or None
            where = xs if numeric_x else [positions[x] for x in xs]
            panel.errorbar(where, means, yerr=[low, high] if len(spec.seeds) > 1 else None,
                           marker="o", ms=3, lw=1, capsize=2, label=label)
        if not numeric_x:
            panel.set_xticks(range(len(x_values)), [_label(x) for x in x_values],
                             rotation=30 if len(x_values) > 4 else 0)
        elif min(x_values) > 0 and max(x_values) >= 8 * min(x_values):
            panel.set_xscale("log", base=2 if all(isinstance(x, int) for x in x_values) else 10)
        panel.set_xlabel(x_name or "")
        panel.set_title(metric, fontsize=10)
        panel.grid(alpha=0.3)
    if others and 1 < len(series) <= _MAX_LABELLED_SERIES:
        panels[0][0].legend(fontsize=7)
    fixed = ", ".join(f"{name}={_label(value)}" for name, value in spec.fixed.items())
    failed = sum(line["status"] != "ok" for line in lines)
    figure.suptitle(f"{spec.function} sweep" + (f" — {fixed}" if fixed else " — defaults")
                    + (f" ({failed} failed points)" if failed else ""), fontsize=11)
    return save_figure(figure, path)
