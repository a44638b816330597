"""The host-model benchmark of `make bench`: one bf16 training iteration of each zoo model
on the A100 preset at its documented batch, then a sweep over the configuration grid."""

import itertools
from types import SimpleNamespace

import pytest

from matndp.host import bench_host
from matndp.host.bench_host import bench_host_models
from matndp.host.gpu import PRESETS
from matndp.host.offload import plan_offload
from matndp.host.zoo import build_model


# The batch each model is benchmarked at (docs/benchmarks.md).
BATCHES = {"resnet50": 64, "vgg16_bn": 32, "bert-base": 32, "gpt2": 8}
READING_S = 1.234567


@pytest.fixture
def result(tmp_path, monkeypatch):
    # Where no calibration file exists, so the documented defaults are used; per test, not
    # shared, so that the mutation run records each test as reaching the bench. The
    # bench's clock advances 1.234567 s per reading: every time it reports is a whole
    # number of readings apart, with more places than the report keeps.
    monkeypatch.chdir(tmp_path)
    seconds = itertools.count()
    monkeypatch.setattr(bench_host, "time",
                        SimpleNamespace(perf_counter=lambda: next(seconds) * READING_S))
    return bench_host_models(quick=True)


def test_each_model_reports_its_bf16_iteration_on_the_a100(result, calibration):
    assert result["calibration"] == calibration.source == "defaults"
    assert set(result["models"]) == set(BATCHES)
    for name, batch in BATCHES.items():
        row = result["models"][name]
        graph = build_model(name, batch=batch, dtype="bf16")
        plan = plan_offload(graph, PRESETS["a100"], calibration)
        assert row["ops"] == len(graph.ops)
        # Rounded to four places, the plan's own speedup.
        assert row["speedup_a100_bf16"] == round(plan.speedup, 4)
        assert row["speedup_a100_bf16"] != round(plan_offload(
            build_model(name, batch=batch, dtype="fp32"), PRESETS["a100"], calibration).speedup, 4)
        # Three readings per model: before building, after building, after planning;
        # rounded to four places.
        assert (row["build_s"], row["time_and_plan_s"], row["total_s"]) == (1.2346, 1.2346, 2.4691)


def test_the_quick_sweep_runs_25_configurations_spread_over_the_grid(result):
    sweep = result["sweep"]
    assert sweep["configurations"] == 25
    # One reading before the sweep and one after it: 1.234567 s, to three places, and
    # 1.234567 / 25 = 0.04938 s, to four.
    assert (sweep["wall_s"], sweep["per_configuration_s"]) == (1.235, 0.0494)
