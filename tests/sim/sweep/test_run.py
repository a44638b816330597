"""Sweeps on the local pool: one line per point with the model's own results, failures
recorded, resumption, the summary plot."""

import json
import math

import pytest

from matndp.host.report import RunConfig, run_gpu
from matndp.sim.sweep import LocalPool, ResultFile, run_sweep

from .sweeps import FAILING, gpu_spec, without_timing


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    output = tmp_path_factory.mktemp("sweep") / "gpu.jsonl"
    summary = run_sweep(gpu_spec(), output, LocalPool(2), progress=False)
    return output, summary


def _read(path):
    return [json.loads(text) for text in path.read_text().splitlines()]


def test_every_point_gives_one_line_with_its_configuration_and_the_models_results(first_run):
    output, summary = first_run
    lines = _read(output)
    spec = gpu_spec()
    points = {point.key: point for point in spec.points()}
    assert sorted(line["key"] for line in lines) == sorted(points)
    assert (summary.points, summary.run, summary.skipped, summary.failed) == (8, 8, 0, 2)
    for line in lines:
        point = points[line["key"]]
        assert line["point"] == "gpu" and line["config"] == point.config and line["seed"] is None
        config = line["config"]
        assert config["gpu"] == "v100" and config["dtype"] == "fp32"
        assert line["wall_s"] >= 0 and line["worker"]
        if (config["model"], config["batch"]) in FAILING:
            assert line["status"] == "failed" and "results" not in line
            assert line["error"].startswith("ValueError: vgg16_bn at batch 192 (fp32) needs")
            continue
        assert line["status"] == "ok"
        # The point's calibration is the one the sweep resolved (the measured file, when a
        # `make bench` has written one, named by its absolute path).
        expected = json.loads(json.dumps(run_gpu(RunConfig(
            config["model"], "v100", config["batch"], "fp32", policy=config["policy"],
            calibration_path=config.get("calibration")))))
        assert line["results"] == expected


def test_results_differ_where_the_configuration_does(first_run):
    lines = [line for line in _read(first_run[0]) if line["status"] == "ok"]
    by = {(l["config"]["model"], l["config"]["batch"], l["config"]["policy"]): l["results"]
          for l in lines}
    assert by[("resnet50", 2, "none")]["speedup"] == 1.0
    assert by[("resnet50", 2, "auto")]["speedup"] > 1.0
    assert by[("resnet50", 192, "auto")]["baseline_s"] > by[("resnet50", 2, "auto")]["baseline_s"]


def test_the_summary_plot_is_written_beside_the_output(first_run):
    output, summary = first_run
    assert summary.plot == str(output.with_suffix(".png"))
    assert output.with_suffix(".png").stat().st_size > 10_000


def test_a_resumed_sweep_runs_only_what_is_missing(first_run, tmp_path):
    source, _ = first_run
    lines = source.read_text().splitlines(keepends=True)
    output = tmp_path / "resumed.jsonl"
    # Five finished points and the sixth cut off mid-line, as a stopped run leaves them.
    output.write_text("".join(lines[:5]) + lines[5][:len(lines[5]) // 2])
    summary = run_sweep(gpu_spec(), output, LocalPool(2), progress=False, plot=False)
    assert (summary.points, summary.run, summary.skipped) == (8, 3, 5)
    resumed = ResultFile(output).load()
    assert len(resumed) == 8
    assert [line["key"] for line in resumed[:5]] == [json.loads(l)["key"] for l in lines[:5]]
    assert without_timing(resumed) == without_timing(_read(source))
    again = run_sweep(gpu_spec(), output, LocalPool(2), progress=False, plot=False)
    assert (again.run, again.skipped, again.failed) == (0, 8, 0)
    assert len(ResultFile(output).load()) == 8


def test_failed_points_run_again_only_when_asked(first_run, tmp_path):
    output = tmp_path / "retry.jsonl"
    output.write_text(first_run[0].read_text())
    kept = run_sweep(gpu_spec(), output, LocalPool(1), progress=False, plot=False)
    assert (kept.run, kept.skipped) == (0, 8)
    retried = run_sweep(gpu_spec(), output, LocalPool(1), progress=False, plot=False,
                        retry_failed=True)
    assert (retried.run, retried.skipped, retried.failed) == (2, 6, 2)
    lines = ResultFile(output).load()
    assert len(lines) == 8 and len({line["key"] for line in lines}) == 8


def test_seeds_repeat_a_point_under_distinct_keys(tmp_path):
    from matndp.sim.sweep import parse_spec
    spec = parse_spec({"point": "gpu", "fixed": {"batch": 1}, "axes": {"model": ["resnet50"]},
                       "seeds": [1, 2, 3]})
    run_sweep(spec, tmp_path / "seeds.jsonl", LocalPool(2), progress=False)
    lines = ResultFile(tmp_path / "seeds.jsonl").load()
    assert sorted(line["seed"] for line in lines) == [1, 2, 3]
    assert len({line["key"] for line in lines}) == 3
    # the host model is deterministic: the seed repeats the point
    assert len({json.dumps(line["results"], sort_keys=True) for line in lines}) == 1
    assert (tmp_path / "seeds.png").exists()


def test_a_tier_point_gives_the_tier_models_metrics(tmp_path):
    from matndp.host.tier.run import run_model
    from matndp.sim.sweep import parse_spec
    spec = parse_spec({"point": "tier", "fixed": {"model": "resnet50", "batch": 2},
                       "axes": {"hbm_fraction": [0.25], "policy": ["g10", "lru"]}})
    summary = run_sweep(spec, tmp_path / "tier.jsonl", LocalPool(2), progress=False)
    assert (summary.run, summary.failed) == (2, 0)
    for line in ResultFile(tmp_path / "tier.jsonl").load():
        expected = run_model("resnet50", policy=line["config"]["policy"], batch=2,
                             hbm_fraction=0.25).metrics
        assert line["results"] == json.loads(json.dumps(expected))
        assert math.isfinite(line["results"]["iteration_s"])


def test_the_pool_refuses_a_bad_job_count():
    for jobs in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="jobs must be an integer >= 1"):
            LocalPool(jobs)
