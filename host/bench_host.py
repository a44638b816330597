"""Benchmark of the host model: wall time to build and time one iteration of each zoo
model, and of a sweep over configurations (models x presets x batches x dtypes)."""

import itertools
import time

from .calibration import load_calibration
from .gpu import PRESETS
from .offload import plan_offload
from .zoo import MODEL_NAMES, build_model


__all__ = ["bench_host_models"]

_BATCH = {"resnet50": 64, "vgg16_bn": 32, "bert-base": 32, "gpt2": 8}


def bench_host_models(quick=False):
    calibration = load_calibration()
    per_model = {}
    for name in MODEL_NAMES:
        started = time.perf_counter()
        graph = build_model(name, batch=_BATCH[name], dtype="bf16")
        built = time.perf_counter()
        plan = plan_offload(graph, PRESETS["a100"], calibration)
        timed = time.perf_counter()
        per_model[name] = {"ops": len(graph.ops), "build_s": round(built - started, 4),
                           "time_and_plan_s": round(timed - built, 4),
                           "total_s": round(timed - started, 4),
                           "speedup_a100_bf16": round(plan.speedup, 4)}
    configurations = list(itertools.product(
        MODEL_NAMES, PRESETS, (1, 4, 16) if quick else (1, 2, 4, 8, 16, 32), ("fp32", "bf16")))
    wanted = 25 if quick else 100     # evenly spread over the grid
    configurations = [configurations[i * len(configurations) // wanted] for i in range(wanted)]
    started = time.perf_counter()
    for model, gpu, batch, dtype in configurations:
        plan_offload(build_model(model, batch=batch, dtype=dtype,
                                 seq_len=256 if model == "gpt2" else None),
                     PRESETS[gpu], calibration)
    sweep_s = time.perf_counter() - started
    return {"calibration": calibration.source, "models": per_model,
            "sweep": {"configurations": len(configurations), "wall_s": round(sweep_s, 3),
                      "per_configuration_s": round(sweep_s / len(configurations), 4)}}
