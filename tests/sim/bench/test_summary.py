"""The table `make bench` ends with, from the JSON files it wrote."""

import json

from matndp.sim.bench.summary import HEADLINES, headline_rows, summary_table


def _document(tmp_path, name, results):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"benchmark": name, "results": results}))
    return path


def test_headlines_are_measured_against_their_targets(tmp_path):
    tiering = _document(tmp_path, "tiering", {"runs": [
        {"model": "gpt2", "plan_and_simulate_s": 0.4}, {"model": "gpt2", "plan_and_simulate_s": 6.5},
        {"model": "bert-base", "plan_and_simulate_s": 60.0}]})
    trigger = _document(tmp_path, "trigger_stream", {"runs": {
        "verilator/random": {"cycles_per_s": 3400}, "icarus/random": {"cycles_per_s": 900}}})
    rows = headline_rows([tiering, trigger])
    assert rows[0][0] == "tiering" and rows[0][2:] == ("6.5 s", "≤ 5 s", "NOT MET")
    assert rows[1][2:] == ("3.4 kcycles/s", "≥ 1 Mcycles/s", "NOT MET")
    assert rows[2][2:] == ("900 cycles/s", "-", "measured")
    fast = _document(tmp_path, "tiering", {"runs": [{"model": "gpt2", "plan_and_simulate_s": 0.2}]})
    assert headline_rows([fast])[0][4] == "met"


def test_a_benchmark_without_a_headline_is_listed_by_its_file(tmp_path):
    other = _document(tmp_path, "warp_drive", {"anything": 1})
    broken = _document(tmp_path, "kernel_iss", {"runs": "?"})
    rows = headline_rows([other, broken])
    assert rows[0] == ("warp_drive", f"see {other}", "-", "-", "-")
    assert rows[1][2] == "not in the results"
    table = summary_table([other, broken])
    assert table.splitlines()[0].split() == ["benchmark", "figure", "measured", "target", "status"]
    assert f"JSON per benchmark under {tmp_path}" in table


def test_every_registered_benchmark_has_a_headline():
    from matndp.sim.bench import BENCHMARKS
    assert set(HEADLINES) <= set(BENCHMARKS)
    assert [name for name in BENCHMARKS if name not in HEADLINES] == []


def test_fp_throughput_is_the_lowest_op_at_full_rate(tmp_path):
    entry = lambda none, random: {"none": {"vectors_per_s": 9, "results_per_cycle": none},
                                  "random": {"vectors_per_s": 8, "results_per_cycle": random}}
    fp = _document(tmp_path, "fp_vectors", {
        "add": {"unit": {"latency_cycles": 6}, "verilator": entry(1.0, 0.5),
                "amaranth": {"none": {"vectors_per_s": 3}}},
        "div": {"unit": {"latency_cycles": 30}, "verilator": entry(0.999, 0.52)}})
    rows = headline_rows([fp])
    assert rows[1][2:] == ("0.999 results/cycle", "≥ 0.500 results/cycle", "met")


def test_stream_kernels_headline_counts_the_kernels_stall_free_at_their_target(tmp_path):
    streams = [{"kernel": "relu_fwd", "stall_free_at_target": True},
               {"kernel": "axpy", "stall_free_at_target": True},
               {"kernel": "layernorm_bwd_stats", "stall_free_at_target": False},
               {"kernel": "sgd_momentum", "stall_free_at_target": True}]
    measured = _document(tmp_path, "kernel_on_the_fly", {"default": [], "stream_kernels": {"default": streams, "channel": []}})
    row = next(row for row in headline_rows([measured]) if "target interval" in row[1])
    assert row[2:] == ("75% of the kernels", "≥ 100% of the kernels", "NOT MET")
    quick = _document(tmp_path, "kernel_on_the_fly", {"default": []})
    row = next(row for row in headline_rows([quick]) if "target interval" in row[1])
    assert row[2] == "not measured" and row[4] == "NOT MET"
