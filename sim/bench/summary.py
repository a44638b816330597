"""The table ``make bench`` ends with: each benchmark's headline figures against their
targets (docs/benchmarks.md lists both), read back from the JSON files it wrote.

A headline is registered per benchmark name in :data:`HEADLINES`; a benchmark without one
is listed with the path of its JSON file.
"""

from dataclasses import dataclass
import json
import math
import pathlib
from typing import Callable

from matndp.host.units import format_seconds, format_si


__all__ = ["Headline", "HEADLINES", "headline_rows", "summary_table"]


@dataclass(frozen=True)
class Headline:
    """One figure of a benchmark's results.

    figure:  what it is, in words.
    value:   ``results -> number`` (the ``results`` object of the benchmark's JSON).
    show:    ``number -> str`` with its unit.
    target:  ``(">=" or "<=", number)``, or None for a figure measured without a target.
    """

    figure: str
    value: Callable
    show: Callable
    target: tuple = None

    def status(self, value):
        if self.target is None:
            return "measured"
        relation, limit = self.target
        met = value >= limit if relation == ">=" else value <= limit
        return "met" if met else "NOT MET"

    def target_text(self):
        if self.target is None:
            return "-"
        relation, limit = self.target
        return f"{'≥' if relation == '>=' else '≤'} {self.show(limit)}"


def _per_second(unit):
    return lambda value: format_si(value, f"{unit}/s")


def _slowest_fp_op(results, simulator="verilator", pressure="random"):
    rates = [entry[simulator][pressure]["vectors_per_s"] for entry in results.values()
             if pressure in entry.get(simulator, {})]
    return min(rates)


def _lowest_fp_throughput(results, simulator="verilator", pressure="none"):
    rates = [entry[simulator][pressure]["results_per_cycle"] for entry in results.values()
             if "results_per_cycle" in entry.get(simulator, {}).get(pressure, {})]
    return min(rates)


def _trigger_rate(results, simulator="verilator", pressure="random"):
    return results["runs"][f"{simulator}/{pressure}"]["cycles_per_s"]


def _slowest_tiering(results, model="gpt2"):
    return max(run["plan_and_simulate_s"] for run in results["runs"] if run["model"] == model)


def _iss_rate(results):
    return min(run["instructions_per_s"] for run in results["runs"])


def _tail_share(result, name):
    return next((entry["tail_share"] for entry in result.get("tails", ()) if entry["kernel"] == name),
                float("inf"))


def _stall_free(result, engine, name):
    return next((entry["highest_stall_free_writes_per_cycle"] or 0.0
                 for entry in result.get(engine, ()) if entry["kernel"] == name), 0.0)


def _streams_stall_free(result):
    """The share of the write-triggered kernels stall-free from the arming at their target
    interval; NaN when the run did not measure them (a quick run)."""
    streams = result.get("stream_kernels", {}).get("default")
    return sum(entry["stall_free_at_target"] for entry in streams) / len(streams) \
        if streams else math.nan


def _share_of_kernels(value):
    return "not measured" if math.isnan(value) else f"{value:.0%} of the kernels"


def _writes_per_cycle(value):
    return f"{value:.2f} writes/cycle"


def _cosim_run(results, label):
    for run in results["runs"]:
        if run["run"].startswith(label):
            return run
    raise KeyError(label)


HEADLINES = {
    "trigger_stream": [
        Headline("NDP slice, per-cycle cocotb testbench, Verilator, random back-pressure",
                 _trigger_rate, _per_second("cycles"), (">=", 1e6)),
        Headline("the same under Icarus", lambda r: _trigger_rate(r, "icarus"),
                 _per_second("cycles")),
    ],
    "batch_harness": [
        Headline("batch harness, DNN stream through the slice with its engine, checked, "
                 "Verilator (per CPU second)", lambda r: r["harness"]["checked_cycles_per_cpu_s"],
                 _per_second("cycles")),
        Headline("the same RTL in a plain C++ loop, no Python, no checks (the limit)",
                 lambda r: r["limit"]["without_logs"]["cycles_per_cpu_s"], _per_second("cycles")),
        Headline("batch harness, checked, as a share of that limit (the target while the limit "
                 "is under 2 Mcycles/s)", lambda r: r["ratios"]["checked_harness_share_of_limit"],
                 lambda v: f"{v:.0%}", (">=", 0.5)),
        Headline("batch harness over the per-cycle testbench, same stimulus",
                 lambda r: r["ratios"]["harness_over_per_cycle"], lambda v: f"{v:.1f}x",
                 (">=", 10.0)),
    ],
    "fp_vectors": [
        Headline("FP32 units through the batch harness, Verilator, slowest op",
                 _slowest_fp_op, _per_second("vectors")),
        Headline("FP32 units, lowest results per cycle of any op (Verilator, full rate)",
                 _lowest_fp_throughput, lambda v: f"{v:.3f} results/cycle", (">=", 0.5)),
    ],
    "tiering": [
        Headline("GPT-2 small batch 8: plan + 3 simulated iterations, slowest policy",
                 _slowest_tiering, format_seconds, ("<=", 5.0)),
    ],
    "host_models": [
        Headline("GPU model: build, time and plan one configuration",
                 lambda r: r["sweep"]["per_configuration_s"], format_seconds),
    ],
    "kernel_iss": [
        Headline("kernel instruction-set simulator, slowest kernel",
                 _iss_rate, _per_second("instructions")),
    ],
    "kernel_rtl": [
        Headline("engine, GPU idle: lowest share of the issue/memory bound over the kernels",
                 lambda r: min(p["efficiency"] for p in r["phases"]), lambda v: f"{v:.0%}",
                 (">=", 0.9)),
        Headline("engine: rate lost from memory latency 10 to 100 cycles, worst kernel",
                 lambda r: max(s["slowdown"]["100"] for s in r["memory_latency_sensitivity"]),
                 lambda v: f"{v:.2f}x", ("<=", 1.1)),
        Headline("reductions at 768-column rows and 256 channels: lowest share of the bound",
                 lambda r: min((p["efficiency"] for p in r.get("model_sized_reductions", ())),
                               default=0.0), lambda v: f"{v:.0%}", (">=", 0.9)),
    ],
    "kernel_on_the_fly": [
        Headline("bn_stats on the fly from the arming: highest stall-free GPU write rate, "
                 "default configuration",
                 lambda r: _stall_free(r, "default", "bn_stats"), _writes_per_cycle, (">=", 0.5)),
        Headline("bias_relu on the fly: the same",
                 lambda r: _stall_free(r, "default", "bias_relu"), _writes_per_cycle,
                 (">=", 1 / 3)),
        Headline("bn_stats on the fly, channel configuration",
                 lambda r: _stall_free(r, "channel", "bn_stats"), _writes_per_cycle, (">=", 1.0)),
        Headline("bias_relu on the fly, channel configuration",
                 lambda r: _stall_free(r, "channel", "bias_relu"), _writes_per_cycle, (">=", 0.5)),
        Headline("write-triggered kernels stall-free from the arming at their target "
                 "interval (4 cycles; dropout, where 5; sgd_momentum 6), default configuration",
                 _streams_stall_free, _share_of_kernels, (">=", 1.0)),
        Headline("bn_stats, 256 channels, a write every 4 cycles: tail after the last write",
                 lambda r: _tail_share(r, "bn_stats"), lambda v: f"{v:.1%} of the stream",
                 ("<=", 0.1)),
        Headline("layernorm_stats, 768 columns, the same",
                 lambda r: _tail_share(r, "layernorm_stats"), lambda v: f"{v:.1%} of the stream",
                 ("<=", 0.1)),
    ],
    "tiering_traces": [
        Headline("SENet-154-sized trace: import + simulate, slowest of ideal, g10, tm",
                 lambda r: max(run["import_and_simulate_s"] for run in r["runs"]
                               if run["policy"] != "lru"), format_seconds, ("<=", 10.0)),
        Headline("the same, page-granular lru",
                 lambda r: max(run["import_and_simulate_s"] for run in r["runs"]
                               if run["policy"] == "lru"), format_seconds, ("<=", 120.0)),
    ],
    "cosim": [
        Headline("make sim's co-simulation (ResNet-50 layer1.0, batch 2), planned, run and checked",
                 lambda r: _cosim_run(r, "make sim")["wall_s"], format_seconds),
        Headline("a whole ResNet-50 iteration (batch 2), one slice, every kernel checked, one worker",
                 lambda r: _cosim_run(r, "whole")["wall_s"], format_seconds, ("<=", 180.0)),
        Headline("the same on two worker processes, faster by", lambda r: r["two_workers_speedup"],
                 lambda v: f"{v:.2f}x", (">=", 1.8)),
        Headline("planning the whole ResNet-50 iteration at batch 32",
                 lambda r: _cosim_run(r, "planning the whole iteration, batch 32")["plan_s"],
                 format_seconds, ("<=", 30.0)),
    ],
    "expander": [
        Headline("expander slice, K = 4 GPUs, adam: sectors reduced and stepped per cycle",
                 lambda r: next(run["sectors_reduced_per_cycle"] for run in r["runs"]
                                if run["ports"] == 4 and run["optimizer"] == "adam"),
                 lambda v: f"{v:.4f} sectors/cycle", (">=", 0.069)),
        Headline("the same: share of the memory bound (its minimum accesses at one per cycle)",
                 lambda r: next(run["memory_bound_share"] for run in r["runs"]
                                if run["ports"] == 4 and run["optimizer"] == "adam"),
                 lambda v: f"{100 * v:.0f} %", (">=", 0.9)),
        Headline("the same: memory accesses per reduced sector over the scheme's minimum",
                 lambda r: max(run["memory_accesses_per_reduced_sector"] /
                               run["minimum_accesses_per_reduced_sector"] for run in r["runs"]),
                 lambda v: f"{v:.2f}x", ("<=", 1.0)),
    ],
    "sweep": [
        Headline("1 000-point host-model sweep, local pool",
                 lambda r: r["local_pool"]["wall_s"], format_seconds, ("<=", 60.0)),
        Headline("the same on local Ray", lambda r: r["ray"]["wall_s"], format_seconds,
                 ("<=", 60.0)),
    ],
}


def headline_rows(paths):
    """``(benchmark, figure, measured, target, status)`` per headline of the files."""
    rows = []
    for path in paths:
        document = json.loads(pathlib.Path(path).read_text())
        name = document["benchmark"]
        for headline in HEADLINES.get(name, ()):
            try:
                value = headline.value(document["results"])
            except (KeyError, TypeError, ValueError):
                rows.append((name, headline.figure, "not in the results", headline.target_text(), "-"))
                continue
            rows.append((name, headline.figure, headline.show(value), headline.target_text(),
                         headline.status(value)))
        if name not in HEADLINES:
            rows.append((name, f"see {path}", "-", "-", "-"))
    return rows


def summary_table(paths):
    """The headline rows as an aligned text table, the JSON folder under it."""
    header = ("benchmark", "figure", "measured", "target", "status")
    rows = [header] + headline_rows(paths)
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    folders = sorted({str(pathlib.Path(path).parent) for path in paths})
    lines.append(f"(JSON per benchmark under {', '.join(folders)}; figures and targets: "
                 f"docs/benchmarks.md)")
    return "\n".join(lines)
