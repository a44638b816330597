"""Benchmark: simulated cycles per second of the batch harness on a DNN stream through the
whole slice (trigger, engine, arbiter), with the bulk checks, beside the same stimulus in
the per-cycle testbench and the stand-alone C++ limit, all in one run.

The stream: ResNet-50's ``layer1.0.conv3`` output (real values) written by the GPU into
two tensors, one running ``bias_relu`` on the fly, the other ``bn_stats``, interleaved
sector by sector with as many unrelated reads and writes, 0..2 idle cycles before each
request, random back-pressure (0.2) on every stream and memory reordering among 4; in
chunks of 16 384 requests. Every run is checked: the GPU path against the memory model,
the events against the ranges, the outputs bit for bit against the ISS and the goldens.

Rates are given by wall time and by the simulator process's CPU time (the development
machines are shared, so a process often gets a fraction of a core; the CPU figure is the
one to compare across runs). ``cycles_per_s`` of a batch run counts the phases (the
harness running, logs written); ``checked_cycles_per_s`` adds the time of the bulk checks
(the GPU path against the memory model, the events, the outputs against the numpy
goldens). The outputs are also compared with the instruction-set simulator, timed apart
(``check_with_iss_s``): a second model of the kernels, not a check the rate depends on.
"""

import time

from matndp.sim.batch import BatchTiming, CheckFailed
from matndp.sim.flows.kernel_batch import KernelBatch
from matndp.sim.batch.standalone import run_standalone
from matndp.sim.flows.engine_layer import LAYER, layer_launches


__all__ = ["bench_batch_harness", "dnn_batch"]


TIMING = BatchTiming.pressure(0.2, latency=20, reorder=4, seed=1)


def dnn_batch(rows, *, seed=1, chunk=16384, kernels=("bias_relu", "bn_stats")):
    """The benchmark's :class:`KernelBatch`: ``rows`` output pixels per tensor, one tensor
    per kernel."""
    launches = layer_launches(rows, seed, kernels)
    return KernelBatch(launches, seed=seed, timing=TIMING, unrelated_per_access=1, max_gap=2,
                       chunk=chunk)


def _rates(cycles, wall_s, cpu_s):
    return {"cycles": cycles, "wall_s": round(wall_s, 3), "cpu_s": round(cpu_s, 3),
            "cycles_per_s": round(cycles / wall_s) if wall_s else None,
            "cycles_per_cpu_s": round(cycles / cpu_s) if cpu_s else None}


def _measure(batch, **options):
    """Run and check ``batch``; the phases' rates, the checks' time and outcome."""
    begun = time.perf_counter()
    run = batch.run(**options)
    process_s = time.perf_counter() - begun
    phases = run.result.phases()
    figures = _rates(run.result.cycles, sum(p["wall_s"] for p in phases),
                     sum(p["cpu_s"] for p in phases))
    begun = time.perf_counter()
    try:
        summary = run.check(iss=False)
        check_s = time.perf_counter() - begun
        run.check(iss=True)
        figures["check"] = "passed"
        figures["requests"] = summary["gpu_requests"]
        figures["engine_requests"] = summary["engine_requests"]
    except CheckFailed as failure:
        check_s = time.perf_counter() - begun
        figures["check"] = f"FAILED: {failure}"
    figures["check_s"] = round(check_s, 3)
    figures["check_with_iss_s"] = round(time.perf_counter() - begun - check_s, 3)
    figures["checked_cycles_per_s"] = round(figures["cycles"] / (figures["wall_s"] + check_s))
    figures["checked_cycles_per_cpu_s"] = round(figures["cycles"] / (figures["cpu_s"] + check_s))
    figures["simulator_process_s"] = round(process_s, 3)
    return run, figures


def bench_batch_harness(quick=False):
    rows = 64 if quick else 512
    batch = dnn_batch(rows)
    run, harness = _measure(batch)
    limit = {"without_logs": run_standalone(run.result), "with_logs": run_standalone(run.result, logs=True)}
    for figures in limit.values():
        figures.update(_rates(figures["cycles"], figures["wall_s"], figures["cpu_s"]))
        figures.pop("directory", None)
    # The per-cycle testbench, waves and Icarus run a shorter stream of the same kind.
    short = dnn_batch(max(8, rows // 8))
    _, per_cycle = _measure(short, replay=True)
    _, short_harness = _measure(short)
    _, waves = _measure(short, waves=True)
    # Icarus runs this RTL at tens of cycles per second: two output pixels through
    # bias_relu (bn_stats' finalizer alone takes some 16 000 cycles).
    _, icarus = _measure(dnn_batch(2, kernels=("bias_relu",)), simulator="icarus")

    def ratio(a, b, key="cycles_per_cpu_s", of=None):
        return round(a[key] / b[of or key], 3) if a.get(key) and b.get(of or key) else None
    return {
        "stream": {"layer": LAYER, "rows_per_tensor": rows, "kernels": ["bias_relu", "bn_stats"],
                   "unrelated_per_access": 1, "max_gap": 2, "pause": 0.2, "reorder": 4,
                   "memory_latency": TIMING.latency},
        "harness": harness,
        "limit": limit,
        "per_cycle": {**per_cycle, "rows_per_tensor": max(8, rows // 8)},
        "harness_short": short_harness,
        "waves": waves,
        "icarus": {**icarus, "rows_per_tensor": 2, "kernels": ["bias_relu"]},
        "ratios": {
            "harness_over_per_cycle": ratio(harness, per_cycle),
            "harness_over_per_cycle_wall": ratio(harness, per_cycle, "cycles_per_s"),
            "harness_share_of_limit": ratio(harness, limit["without_logs"]),
            "checked_harness_share_of_limit": ratio(harness, limit["without_logs"],
                                                    "checked_cycles_per_cpu_s", "cycles_per_cpu_s"),
            "waves_over_harness": ratio(waves, short_harness),
            "icarus_over_harness": ratio(icarus, harness),
        },
    }
