"""The figure of ``matndp gpu run --plot``: a timeline row per engine and, per op kind,
the baseline GPU, matNDP GPU and standalone NDP times of the report's breakdown."""

import pytest

from matndp.host import plots
from matndp.host.output import pyplot
from matndp.host.report import RunConfig, run_gpu


def test_the_bars_are_the_breakdown_in_milliseconds_under_their_labels(drawn_figures, tmp_path):
    figures = drawn_figures(plots)
    report, plan = run_gpu(RunConfig("vgg16_bn", "a100", 2, "bf16"), with_plan=True)
    plots.plot_run(plan, report, tmp_path / "run.png")
    timeline, bars = figures[0].axes
    assert timeline.get_title() == (
        f"vgg16_bn batch 2 bf16 on A100: baseline {report['baseline_s'] * 1e3:.2f} ms, matNDP "
        f"{report['matndp_s'] * 1e3:.2f} ms ({report['baseline_s'] / report['matndp_s']:.2f}x; "
        f"calibration: {report['calibration']['source']})")
    assert [label.get_text() for label in timeline.get_yticklabels()] == \
        ["GPU baseline", "GPU matNDP", "NDP on the fly", "NDP standalone"]
    legend = [text.get_text() for text in bars.get_legend().get_texts()]
    assert legend == ["baseline GPU", "matNDP GPU (longer where NDP kernels ride on the op's writes)",
                      "matNDP NDP standalone (overlapped)"]
    kinds = list(report["breakdown"])
    assert [label.get_text() for label in bars.get_xticklabels()] == kinds
    for container, key in zip(bars.containers, ("baseline_s", "matndp_gpu_s", "matndp_ndp_s")):
        heights = [patch.get_height() for patch in container.patches]
        assert heights == pytest.approx([report["breakdown"][kind][key] * 1e3 for kind in kinds])
    # the three bars of a kind stand side by side, equally wide, none over another
    for index in range(len(kinds)):
        spans = [(c.patches[index].get_x(), c.patches[index].get_x() + c.patches[index].get_width())
                 for c in bars.containers]
        assert len({round(end - start, 12) for start, end in spans}) == 1
        assert all(end <= start + 1e-12 for (_, end), (start, _) in zip(spans, spans[1:]))
        assert spans[0][0] < index < spans[-1][1]


def test_the_timeline_rows_are_the_plans_busy_intervals_in_milliseconds(drawn_figures, tmp_path):
    figures = drawn_figures(plots)
    report, plan = run_gpu(RunConfig("resnet50", "a100", 2, "bf16", policy="all"), with_plan=True)
    plots.plot_run(plan, report, tmp_path / "run.png")
    timeline = figures[0].axes[0]
    on_the_fly = [(e.start_s, e.end_s) for e in plan.schedule if e.where == "on_the_fly"]
    expected = [sorted((e.start_s, e.end_s) for e in plan.baseline),
                sorted((b.start_s, b.end_s) for b in plan.gpu_busy), sorted(on_the_fly),
                sorted((b.start_s, b.end_s) for b in plan.ndp_busy)]
    assert all(expected)
    drawn = [[] for _ in expected]
    for collection in timeline.collections:
        for path in collection.get_paths():
            xs, ys = path.vertices[:, 0], path.vertices[:, 1]
            row = int(round((ys.min() + ys.max()) / 2))
            drawn[row].append((xs.min() / 1e3, xs.max() / 1e3))
    for row, intervals in enumerate(expected):
        flat = lambda pairs: [value for pair in sorted(pairs) for value in pair]
        assert flat(drawn[row]) == pytest.approx(flat(intervals), rel=1e-9, abs=1e-15), row
    legend = [text.get_text() for text in timeline.get_legend().get_texts()]
    assert legend == sorted({op.kind for op in plan.graph.ops})


def test_the_timeline_rows_are_bands_top_down_coloured_by_op_kind(drawn_figures, tmp_path):
    """Row 0 (the baseline GPU) at the top, each band 0.8 of a row high around its row;
    a band's colour is its op kind's in the legend; both axes in milliseconds."""
    figures = drawn_figures(plots)
    report, plan = run_gpu(RunConfig("resnet50", "a100", 2, "bf16", policy="all"), with_plan=True)
    plots.plot_run(plan, report, tmp_path / "run.png")
    timeline, bars = figures[0].axes
    assert timeline.yaxis_inverted()
    assert (timeline.get_xlabel(), bars.get_ylabel()) == ("time (ms)", "time (ms)")
    assert timeline.title.get_fontsize() == 9
    legend = timeline.get_legend()
    colour_of = {text.get_text(): tuple(handle.get_facecolor())
                 for text, handle in zip(legend.get_texts(), legend.legend_handles)}
    assert len(set(colour_of.values())) == len(colour_of)          # one colour per kind
    for collection in timeline.collections:
        assert tuple(collection.get_facecolor()[0]) in colour_of.values()
        for path in collection.get_paths():
            ys = path.vertices[:, 1]
            row = round((ys.min() + ys.max()) / 2)
            assert (ys.min(), ys.max()) == pytest.approx((row - 0.4, row + 0.4))


def test_the_legend_has_one_entry_per_op_kind_in_order_coloured_as_its_bands(drawn_figures, tmp_path):
    """The kinds in alphabetical order, in tab10's colours in turn, at most six columns, in
    the lower right; each kind's baseline bands in its legend colour."""
    figures = drawn_figures(plots)
    report, plan = run_gpu(RunConfig("resnet50", "a100", 2, "bf16", policy="all"), with_plan=True)
    plots.plot_run(plan, report, tmp_path / "run.png")
    timeline = figures[0].axes[0]
    legend = timeline.get_legend()
    kinds = sorted({op.kind for op in plan.graph.ops})
    assert len(kinds) > 6
    tab10 = pyplot().get_cmap("tab10")
    assert [text.get_text() for text in legend.get_texts()] == kinds
    assert [tuple(handle.get_facecolor()) for handle in legend.legend_handles] == \
        [tuple(tab10(index % 10)) for index in range(len(kinds))]
    assert legend._ncols == 6
    assert legend._loc == 4                                          # "lower right"
    assert all(text.get_fontsize() == 7 for text in legend.get_texts())
    kind_of = {op.name: op.kind for op in plan.graph.ops}
    baseline_of = {kind: sorted((e.start_s * 1e3, e.end_s * 1e3) for e in plan.baseline
                                if kind_of[e.op] == kind) for kind in kinds}
    colour_of = dict(zip(kinds, (tuple(tab10(index % 10)) for index in range(len(kinds)))))
    matched = set()
    for collection in timeline.collections:
        paths = collection.get_paths()
        if round(float(paths[0].vertices[:, 1].mean())) != 0:
            continue                                                 # not the baseline row
        spans = sorted((path.vertices[:, 0].min(), path.vertices[:, 0].max()) for path in paths)
        (kind,) = [kind for kind, intervals in baseline_of.items()
                   if len(intervals) == len(spans)
                   and [v for pair in intervals for v in pair]
                   == pytest.approx([v for pair in spans for v in pair], rel=1e-9, abs=1e-12)]
        assert tuple(collection.get_facecolor()[0]) == colour_of[kind]
        matched.add(kind)
    assert matched == set(kinds)
