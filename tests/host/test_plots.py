"""The figure of ``matndp gpu run --plot``: a timeline row per engine and, per op kind,
the baseline GPU, matNDP GPU and standalone NDP times of the report's breakdown."""

import pytest

from matndp.host import plots
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
