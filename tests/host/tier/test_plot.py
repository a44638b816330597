"""The sweep figure of ``matndp tier sweep --plot``: per model, each policy's inter-tier
traffic (GB) and throughput per watt against the HBM capacity in % of the footprint."""

import numpy as np
import pytest

from matndp.host.tier import TierConfig, flash_preset, plot, simulate
from matndp.host.units import format_seconds

from .graphs import PAGE, split_graph


def lru_on_the_split_graph():
    """LRU with 13 pages of HBM: it stalls before two ops."""
    return simulate(split_graph(), np.full(10, 1e-3), TierConfig(hbm_bytes=13 * PAGE),
                    flash_preset("zssd"), "lru")


def _row(model, policy, fraction, traffic, per_watt):
    return {"model": model, "policy": policy, "hbm_fraction": fraction,
            "inter_tier_bytes": traffic, "throughput_per_watt": per_watt}


def test_each_models_row_plots_every_policy_against_the_hbm_fraction(drawn_figures, tmp_path):
    figures = drawn_figures(plot)
    setup = {"gpu": "a100", "batch": 8, "flash": "zssd", "link_gbs": 32}
    rows = [{**_row("mlp", "lru", 0.5, 4e9, 2.0), **setup}, _row("mlp", "lru", 0.25, 6e9, 1.0),
            _row("mlp", "ideal", 0.25, 0.0, 9.0), _row("cnn", "lru", 0.5, 1e9, 3.0),
            {**_row("cnn", "lru", 0.125, 0, 0), "infeasible": "does not fit"}]
    plot.plot_sweep(rows, tmp_path / "sweep.png")
    (traffic, per_watt), (cnn_traffic, _) = figures[0].axes[0:2], figures[0].axes[2:4]
    assert traffic.get_title() == "mlp: inter-tier traffic"
    assert per_watt.get_title() == "mlp: throughput per watt"
    assert cnn_traffic.get_title() == "cnn: inter-tier traffic"
    assert (traffic.get_ylabel(), per_watt.get_ylabel()) == ("GB per iteration", "samples / J")
    # One flash device unless the rows say more.
    assert figures[0].get_suptitle() == "A100, batch 8, fp32; flash zssd, link 32 GB/s"
    lines = {line.get_label(): line for line in traffic.get_lines()}
    assert list(lines["lru"].get_xdata()) == [25, 50]
    assert list(lines["lru"].get_ydata()) == [6, 4]                 # GB, by ascending fraction
    assert list(lines["ideal"].get_xdata()) == [25]
    assert [line.get_marker() for line in traffic.get_lines()] == ["o", "o"]
    assert list(per_watt.get_lines()[0].get_ydata()) == [1.0, 2.0]
    # The infeasible point is left out.
    assert [list(line.get_xdata()) for line in cnn_traffic.get_lines()] == [[50]]
    # Two plots per model, 11 in wide, each row 3.2 in tall, and 0.4 in for the title.
    assert len(figures[0].axes) == 4
    assert tuple(figures[0].get_size_inches()) == pytest.approx((11, 2 * 3.2 + 0.4))


def test_the_run_figure_shows_occupancy_in_milliseconds_of_the_last_iteration(drawn_figures,
                                                                              tmp_path):
    figures = drawn_figures(plot)
    run = lru_on_the_split_graph()
    plot.plot_run(run, {"lru": run.metrics}, tmp_path / "run.png")
    occupancy, traffic = figures[0].axes
    record = run.records[-1]
    step = occupancy.get_lines()[0]
    # Ten 1 ms ops and the stalls: the last sample at the iteration's length.
    assert step.get_xdata()[0] == 0
    assert step.get_xdata()[-1] == pytest.approx((record.end_s - record.start_s) * 1e3)
    assert max(step.get_ydata()) == pytest.approx(13 * PAGE / 1e9)
    assert [bar.get_height() for bar in traffic.patches] == \
        pytest.approx([4 * PAGE / 1e9, 4 * PAGE / 1e9])       # 4 pages out, 4 back


def test_the_run_figure_names_its_lines_stalls_and_setup(drawn_figures, tmp_path):
    """LRU on the split graph with 13 pages of HBM stalls before two of its ops: the
    figure shows each stall as a band ending where its op starts, and names the run's
    iteration and stall time, its lines and its machine."""
    figures = drawn_figures(plot)
    run = lru_on_the_split_graph()
    record = run.records[-1]
    waits = [wait for wait in record.stall_by_boundary if wait > 0]
    assert len(waits) == 2
    metrics = {**run.metrics, "model": "split", "gpu": "a100", "batch": 8, "flash": "zssd",
               "flash_devices": 2, "link_gbs": 32.0, "dtype": "bf16"}
    run.metrics.update(metrics)
    plot.plot_run(run, {"lru": metrics, "ideal": {**metrics, "hbm_to_flash_bytes": 0,
                                                  "flash_to_hbm_bytes": 0}}, tmp_path / "run")
    figure = figures[0]
    occupancy, traffic = figure.axes
    assert figure.get_suptitle() == "A100, batch 8, bf16; flash zssd x 2, link 32 GB/s"
    iteration, stalled = format_seconds(record.end_s - record.start_s), format_seconds(sum(waits))
    assert occupancy.get_title() == f"split: tier occupancy; iteration {iteration}, of it stalled {stalled}"
    assert (occupancy.get_xlabel(), occupancy.get_ylabel()) == ("time in iteration (ms)", "GB")
    legend = [text.get_text() for text in occupancy.get_legend().get_texts()]
    assert legend == ["HBM in use (lru)", f"GPU stalled, waiting for transfers ({stalled})",
                      "HBM capacity", "footprint (all resident)"]
    capacity, footprint = [line.get_ydata()[0] for line in occupancy.get_lines()[1:]]
    assert (capacity, footprint) == pytest.approx((13 * PAGE / 1e9, 17 * PAGE / 1e9))
    bands = occupancy.collections[0].get_paths()
    assert [band.vertices[:, 0].max() - band.vertices[:, 0].min() for band in bands] == \
        pytest.approx([wait * 1e3 for wait in waits])
    assert (traffic.get_title(), traffic.get_ylabel()) == ("traffic per policy",
                                                           "inter-tier GB per iteration")
    assert [text.get_text() for text in traffic.get_legend().get_texts()] == \
        ["HBM → flash", "flash → HBM"]
    assert [tick.get_text() for tick in traffic.get_xticklabels()] == ["lru", "ideal"]


def test_the_run_figure_draws_its_marks_as_described(drawn_figures, tmp_path):
    """The occupancy is a step held until the next sample; each stall band spans the
    axes' full height and ends where its op starts; capacity dashed, footprint dotted;
    the traffic bars stacked (back on top of out); titles at 10 points, legends at 8."""
    figures = drawn_figures(plot)
    run = lru_on_the_split_graph()
    run.metrics.update({"gpu": "a100", "batch": 8, "flash": "zssd", "link_gbs": 32.0})
    plot.plot_run(run, {"lru": run.metrics}, tmp_path / "run")
    figure = figures[0]
    occupancy, traffic = figure.axes
    record = run.records[-1]
    step, capacity, footprint = occupancy.get_lines()
    assert step.get_drawstyle() == "steps-post" and step.get_linewidth() == 1
    assert (capacity.get_linestyle(), footprint.get_linestyle()) == ("--", ":")
    ends = [record.occupancy[2 * slot + 1].time_s - record.start_s
            for slot, wait in enumerate(record.stall_by_boundary) if wait > 0]
    for band, end in zip(occupancy.collections[0].get_paths(), ends):
        assert (band.vertices[:, 1].min(), band.vertices[:, 1].max()) == (0, 1)
        assert band.vertices[:, 0].max() == pytest.approx(end * 1e3)
    out, back = traffic.patches
    assert (out.get_y(), back.get_y()) == pytest.approx((0, 4 * PAGE / 1e9))
    assert figure._suptitle.get_fontsize() == 10 and occupancy.title.get_fontsize() == 10
    assert {text.get_fontsize() for axes in (occupancy, traffic)
            for text in axes.get_legend().get_texts()} == {8}


def test_the_sweep_figure_has_log_axes_ticked_at_each_fraction(drawn_figures, tmp_path):
    figures = drawn_figures(plot)
    rows = [_row("mlp", "lru", 0.5, 4e9, 2.0), _row("mlp", "lru", 0.125, 6e9, 1.0)]
    plot.plot_sweep(rows, tmp_path / "sweep.png")
    traffic, per_watt = figures[0].axes
    assert tuple(figures[0].get_size_inches()) == pytest.approx((11, 3.2 + 0.4))
    assert figures[0].get_suptitle() == ""                 # rows without a setup
    for axes in (traffic, per_watt):
        assert axes.get_xscale() == "log" and axes.get_xlabel() == "HBM capacity (% of footprint)"
        assert [tick.get_text() for tick in axes.get_xticklabels()] == ["12.5", "50"]
        assert list(axes.get_xticks()) == [12.5, 50]
        assert [text.get_text() for text in axes.get_legend().get_texts()] == ["lru"]
        assert axes.get_legend().get_texts()[0].get_fontsize() == 8
    assert (traffic.get_yscale(), per_watt.get_yscale()) == ("linear", "log")
