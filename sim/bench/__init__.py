"""``matndp bench``: performance benchmarks, one JSON file each under ``build/bench/``.

Each entry of :data:`BENCHMARKS` names a function ``f(quick: bool) -> dict`` by
``"module:function"``; its result is written to ``<output>/<name>.json``. Benchmarks
measure and report; they never assert a speed.
"""

import importlib
import json
import pathlib
import platform
import time

from matndp.host.output import write_text


__all__ = ["BENCHMARKS", "run_benchmarks"]


BENCHMARKS = {
    "fp_vectors": "matndp.sim.bench.fp:bench_fp_vectors",
    "host_models": "matndp.host.bench_host:bench_host_models",
    "trigger_stream": "matndp.sim.bench.trigger:bench_trigger_stream",
    "batch_harness": "matndp.sim.bench.batch:bench_batch_harness",
    "tiering": "matndp.host.tier.bench:bench_tiering",
    "tiering_traces": "matndp.host.tier.bench:bench_tier_traces",
    "kernel_iss": "matndp.host.kernels.bench:bench_iss",
    "kernel_rtl": "matndp.sim.bench.kernels:bench_kernels_rtl",
    "kernel_on_the_fly": "matndp.sim.bench.kernels:bench_kernels_on_the_fly",
    "sweep": "matndp.sim.bench.sweep:bench_sweep",
    "cosim": "matndp.sim.bench.cosim:bench_cosim",
    "expander": "matndp.sim.bench.expander:bench_expander",
}


def _machine():
    import os
    return {"python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count()}


def run_benchmarks(output, names=None, quick=False, progress=None):
    """Run the benchmarks ``names`` (default all) and write their JSON under ``output``;
    returns the files written. ``progress`` receives a line as each one starts."""
    output = pathlib.Path(output)
    output.mkdir(parents=True, exist_ok=True)
    selected = names or list(BENCHMARKS)
    unknown = [name for name in selected if name not in BENCHMARKS]
    if unknown:
        raise ValueError(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    written = []
    for number, name in enumerate(selected, 1):
        if progress is not None:
            progress(f"bench {number}/{len(selected)}: {name}")
        module_name, function_name = BENCHMARKS[name].split(":")
        function = getattr(importlib.import_module(module_name), function_name)
        started = time.time()
        result = function(quick=quick)
        document = {"benchmark": name, "started_unix": round(started, 3),
                    "wall_s": round(time.time() - started, 3), "machine": _machine(),
                    "results": result}
        path = write_text(output / f"{name}.json", json.dumps(document, indent=2) + "\n")
        print(f"bench {name}: {path}")
        written.append(path)
    return written
