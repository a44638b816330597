"""Benchmark: a 1 000-point host-model sweep (``gpu`` point function) on the local pool of
two workers and on a local Ray instance of two CPUs."""

import os
import statistics
import pathlib
import tempfile
import time

from matndp.sim.sweep import LocalPool, RayCluster, ResultFile, TIMING_FIELDS, parse_spec, run_sweep


# 4 models x 2 GPUs x 5 batch sizes x 25 NDP slice counts = 1 000 points.
SPEC = {
    "point": "gpu",
    "fixed": {"dtype": "bf16"},
    "axes": {"model": ["resnet50", "vgg16_bn", "bert-base", "gpt2"], "gpu": ["a100", "h100"],
             "batch": {"from": 1, "to": 16, "times": 2},
             "ndp_slices_per_controller": {"from": 1, "to": 25, "step": 1}},
}
QUICK_SLICES = {"from": 1, "to": 3, "step": 1}     # 120 points
JOBS = 2


def _measure(spec, runner, directory, name):
    output = pathlib.Path(directory) / f"{name}.jsonl"
    started = time.perf_counter()
    summary = run_sweep(spec, output, runner, progress=False, plot=False)
    wall = time.perf_counter() - started
    lines = ResultFile(output).load()
    per_point = [line["wall_s"] for line in lines]
    mean = statistics.fmean(per_point)
    return lines, {"points": summary.points, "run": summary.run, "failed": summary.failed,
                   "wall_s": round(wall, 3), "points_per_s": round(summary.run / wall, 1),
                   "point_wall_s_mean": round(mean, 4),
                   "point_wall_s_max": round(max(per_point), 4),
                   # what the runner adds to each point's own time, per worker
                   "overhead_per_point_s": round(wall * JOBS / summary.run - mean, 4),
                   "load_average_1min_after": round(os.getloadavg()[0], 2)}


def _plain(lines):
    return {line["key"]: {k: v for k, v in line.items() if k not in TIMING_FIELDS}
            for line in lines}


def bench_sweep(quick=False):
    data = dict(SPEC, axes=dict(SPEC["axes"]))
    if quick:
        data["axes"]["ndp_slices_per_controller"] = QUICK_SLICES
    spec = parse_spec(data, source="bench")
    with tempfile.TemporaryDirectory() as directory:
        # The machine may be shared: its load says how much of the two cores the sweep had.
        load_before = round(os.getloadavg()[0], 2)
        local_lines, local = _measure(spec, LocalPool(JOBS), directory, "local")
        result = {"point_function": "gpu", "points": len(spec), "jobs": JOBS,
                  "cpus": os.cpu_count(), "load_average_1min_before": load_before,
                  "local_pool": local,
                  "target": "1 000 points in < 60 s on two cores"}
        try:
            import ray
        except ImportError as error:
            result["ray"] = {"skipped": f"ray is not importable: {error}"}
            return result
        started = time.perf_counter()
        ray.init(num_cpus=JOBS, include_dashboard=False, log_to_driver=False,
                 logging_level="error")
        startup = time.perf_counter() - started
        try:
            ray_lines, on_ray = _measure(spec, RayCluster("auto"), directory, "ray")
        finally:
            ray.shutdown()
        on_ray["startup_s"] = round(startup, 3)
        on_ray["same_lines_as_local_pool"] = _plain(ray_lines) == _plain(local_lines)
        result["ray"] = on_ray
    return result
