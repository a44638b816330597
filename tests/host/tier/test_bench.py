"""The tiering benchmarks of `make bench`: every policy on GPT-2 small at batch 8 (quick),
and a G10-format trace under G10's setup (here a small synthetic one)."""

import pytest

from matndp.host.tier import POLICIES, TierConfig, flash_preset, simulate
from matndp.host.tier import bench
from matndp.host.tier.run import model_graph_and_times
from matndp.host.workload.synthetic import write_synthetic_g10


def test_the_quick_tiering_bench_runs_every_policy_on_gpt2():
    result = bench.bench_tiering(quick=True)
    assert (result["flash"], result["gpu"]) == ("zssd", "a100")
    assert [run["policy"] for run in result["runs"]] == list(POLICIES)
    graph, times = model_graph_and_times("gpt2", 8, "a100")
    tier = TierConfig(hbm_fraction=0.5)
    for run in result["runs"]:
        assert (run["model"], run["batch"], run["hbm_fraction"]) == ("gpt2", 8, 0.5)
        if "fails" in run:
            # FlashNeuron keeps all but the activations it offloads in a flat address space:
            # at half the footprint a tensor finds no contiguous run (the reason is kept).
            assert run["policy"] == "flashneuron" and "no contiguous run" in run["fails"]
            continue
        assert (run["ops"], run["tensors"]) == (len(graph.ops), len(graph.tensors))
        assert run["iterations_simulated"] == 3
        # the timings make bench's summary reads (its slowest plan-and-simulate per model)
        assert set(run) == {"model", "batch", "policy", "hbm_fraction", "ops", "tensors",
                            "iterations_simulated", "graph_and_lifetimes_s", "plan_s",
                            "plan_and_simulate_s", "inter_tier_bytes", "iteration_s"}
        assert run["graph_and_lifetimes_s"] >= 0 and run["plan_and_simulate_s"] >= 0
        assert run["plan_s"] is None or run["plan_s"] >= 0
        metrics = simulate(graph, times, tier, flash_preset("zssd"), run["policy"],
                           check=False).metrics
        assert run["iteration_s"] == pytest.approx(metrics["iteration_s"])
        assert run["inter_tier_bytes"] == metrics["inter_tier_bytes"]


def test_the_trace_bench_reports_each_policy_on_the_trace(tmp_path, monkeypatch):
    layers, skips = 10, 2
    path = write_synthetic_g10(tmp_path / "small", layers=layers, skips=skips, batch=16,
                               activation_bytes=1e6, weight_bytes=1e5, seconds=0.25)
    monkeypatch.setattr(bench, "_senet_trace", lambda directory: (
        {"kernels": path / "kernels.config", "times": path / "cudnn16.txt"}, "small"))
    result = bench.bench_tier_traces()
    assert result["preset"] == "g10"
    assert [run["policy"] for run in result["runs"]] == list(POLICIES)
    for run in result["runs"]:
        assert (run["workload"], run["kernels"], run["tensors"]) == \
            ("small", 4 * layers + 3, 7 * layers + skips + 2)
        assert run["iteration_s"] == pytest.approx(0.25, rel=1e-6)    # it fits: no stalls


def test_the_trace_bench_takes_g10s_senet_trace_from_a_checkout_that_has_it(tmp_path, monkeypatch):
    results = tmp_path / "G10" / "results" / "SENet154"
    statistics = results / "1024-run" / "statistics"
    statistics.mkdir(parents=True)
    (statistics / "kernels.config").write_text("")
    (results / "1024-other").mkdir()                   # a run without statistics
    (results / "cudnn1024.txt").write_text("")
    monkeypatch.setenv("MATNDP_G10", str(tmp_path / "G10"))
    assert bench._senet_trace(tmp_path / "scratch") == (
        {"kernels": statistics / "kernels.config", "times": results / "cudnn1024.txt",
         "batch": 1024}, "G10 SENet154 1024")


def test_the_trace_bench_writes_a_senet_sized_trace_without_a_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv("MATNDP_G10", raising=False)
    files, label = bench._senet_trace(tmp_path)
    written = tmp_path / "senet154-sized"
    assert (files, label) == ({"kernels": written / "kernels.config",
                               "times": written / "cudnn1024.txt"}, "synthetic, SENet154-sized")
    assert len(files["times"].read_text().splitlines()) == 2319
    assert files["kernels"].is_file()
