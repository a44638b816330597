"""Throughput of the kernel library on the RTL, and the calibration file the host model
prices NDP work from (``build/calibration/ndp_kernels.json``, :mod:`matndp.host.calibration`).

Every phase kernel of the ops the host model offloads runs through the slice with its
engine (:func:`matndp.sim.flows.kernel_run.run_kernel_rtl`) at two problem sizes, the GPU
issuing one triggering access per cycle with no back-pressure, so the engine is the
bottleneck. From the cycles between arming the entry and its completion:

- cycles per packet (one trigger sector) = the slope between the two sizes, which leaves
  out the once-per-launch cost (initializer, finalizer, the pipeline filling);
- fixed cycles = what the smaller run took beyond ``slope × its packets``.

Beside each measurement, two bounds: issue (the ISS's instructions per packet over the
sub-cores, each issuing one instruction per cycle) and memory (the triggering access
plus the engine's own requests per packet share one memory port, one request per cycle).
``efficiency`` is the larger bound over the measurement. And the latency sensitivity: the
same slope at memory latencies of 10 and 100 cycles (the slots hide the engine's own loads).
"""

import json
import pathlib

from matndp.host.calibration import DEFAULT_CALIBRATION_PATH, DEFAULT_KERNELS, SCHEMA, configuration_record
from matndp.host.kernels.library import KERNELS, OPS, kernel
from matndp.host.kernels.library.iss_runner import run_on_iss
from matndp.host.kernels.library.inputs import random_inputs
from matndp.hw.config import named_config
from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.flows.kernel_run import differing_elements, reference_outputs, run_kernel_rtl


__all__ = ["bench_kernels_rtl", "bench_kernels_on_the_fly", "SIZES", "finalizer_tail",
           "TAILS", "MODEL_SIZES", "bench_phase", "stream_rates", "STREAM_TARGETS"]


# (smaller, larger) problems by the kernels' dimensions: 32 and 128 FP32 packets.
SIZES = {
    ("elements",): ({"elements": 256}, {"elements": 1024}),
    ("rows", "channels"): ({"rows": 16, "channels": 16}, {"rows": 64, "channels": 16}),
    ("rows", "columns"): ({"rows": 4, "columns": 64}, {"rows": 16, "columns": 64}),
}
QUICK_OPS = ("relu_fwd", "batchnorm_fwd", "adam")
# The reductions again at the sizes real models have: BERT-base rows of 768 FP32 (96
# sectors), ResNet-50 channels of 256.
MODEL_SIZES = {
    ("rows", "channels"): ({"rows": 8, "channels": 256}, {"rows": 32, "channels": 256}),
    ("rows", "columns"): ({"rows": 4, "columns": 768}, {"rows": 16, "columns": 768}),
}
MODEL_SIZED = ("bn_stats", "bn_bwd_stats", "layernorm_stats", "layernorm_bwd_stats",
               "softmax_max", "softmax_bwd_dot")


def _measure(name, problem, seed):
    launch = kernel(name).launch(problem)
    inputs = random_inputs(launch, seed)
    run = run_kernel_rtl(name, problem, seed=seed, inputs=inputs)
    if run.error is not None or not run.complete:
        raise RuntimeError(f"{name} {problem}: the RTL run did not complete ({run.error})")
    _, iss = run_on_iss(launch, inputs)
    return {"packets": launch.expected_triggers, "cycles": run.cycles,
            "instructions": run.measurements["instructions"], "iss_instructions": iss.instructions,
            "ndp_memory_requests": run.measurements["ndp_memory_requests"]}


def bench_phase(name, seed=1, sizes=SIZES):
    """One phase kernel at the two sizes: its slope, fixed cost and bounds."""
    small, large = (_measure(name, problem, seed) for problem in sizes[KERNELS[name].dims])
    packets = large["packets"] - small["packets"]
    slope = (large["cycles"] - small["cycles"]) / packets
    sub_cores = KERNEL_CONFIG.engine.sub_cores
    instructions = (large["iss_instructions"] - small["iss_instructions"]) / packets
    issue = instructions / sub_cores
    memory = 1 + (large["ndp_memory_requests"] - small["ndp_memory_requests"]) / packets
    bound = max(issue, memory)
    return {"kernel": name, "cycles_per_packet": round(slope, 3),
            "instructions_per_packet": round(instructions, 3),
            "fixed_cycles": round(max(small["cycles"] - slope * small["packets"], 0.0), 1),
            "issue_bound_cycles_per_packet": round(issue, 3),
            "memory_bound_cycles_per_packet": round(memory, 3),
            "efficiency": round(bound / slope, 3) if slope > 0 else None,
            "runs": [small, large]}


def latency_sensitivity(name, latencies=(10, 100), seed=1):
    """The rate of ``name`` (cycles per packet, the slope between the two problem sizes)
    at each memory latency, and its ratio to the first: how well the µthread slots hide
    the engine's own memory latency. The larger run's total cycles are given beside it;
    they also hold the once-per-launch initializer and finalizer, single µthreads whose
    loads nothing hides."""
    sizes = SIZES[KERNELS[name].dims]
    slopes, totals = {}, {}
    for latency in latencies:
        cycles, packets = [], []
        for problem in sizes:
            launch = kernel(name).launch(problem)
            inputs = random_inputs(launch, seed)
            run = run_kernel_rtl(name, problem, seed=seed, inputs=inputs, memory_latency=latency)
            if run.error is not None or not run.complete:
                raise RuntimeError(f"{name} at latency {latency}: the RTL run did not complete")
            cycles.append(run.cycles)
            packets.append(launch.expected_triggers)
        slopes[latency] = (cycles[1] - cycles[0]) / (packets[1] - packets[0])
        totals[latency] = cycles[1]
    first = slopes[latencies[0]]
    return {"kernel": name, "packets": packets[1],
            "cycles_per_packet_by_memory_latency": {str(k): round(v, 3) for k, v in slopes.items()},
            "cycles_by_memory_latency": {str(k): v for k, v in totals.items()},
            "slowdown": {str(k): round(v / first, 3) for k, v in slopes.items()}}


def bench_kernels_rtl(quick=False, calibration=DEFAULT_CALIBRATION_PATH):
    """Every phase of every host-model op (three ops with ``quick``); writes the
    calibration file and returns the per-phase and per-op figures."""
    ops = QUICK_OPS if quick else tuple(DEFAULT_KERNELS)
    phases = {}
    entries = {}
    for op in ops:
        for phase in OPS[op].phases:
            if phase not in phases:
                phases[phase] = bench_phase(phase)
        measured = [phases[phase] for phase in OPS[op].phases]
        # The first phase runs on the producer's accesses; the others afterwards.
        entries[op] = {"cycles_per_packet": round(sum(m["cycles_per_packet"] for m in measured), 3),
                       "after_cycles_per_packet": round(sum(m["cycles_per_packet"] for m in measured[1:]), 3),
                       "instructions_per_packet": round(sum(m["instructions_per_packet"]
                                                            for m in measured), 3),
                       "fixed_cycles": round(sum(m["fixed_cycles"] for m in measured), 1),
                       "phases": list(OPS[op].phases)}
    document = {"schema": SCHEMA,
                "source": "matndp bench kernel_rtl: RTL runs of the kernel library",
                "ndp_config": configuration_record(KERNEL_CONFIG),
                "kernels": entries}
    path = pathlib.Path(calibration)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
    sensitivity = [latency_sensitivity(name) for name in ("adam",) + (() if quick else ("bn_stats",))]
    model_sized = [] if quick else [bench_phase(name, sizes=MODEL_SIZES) for name in MODEL_SIZED]
    return {"calibration_file": str(path), "ops": entries, "phases": list(phases.values()),
            "memory_latency_sensitivity": sensitivity, "model_sized_reductions": model_sized}


# On the fly: a GPU write stream at several rates, from the arming ---------------------

# The two kernels a producer's output writes trigger in `make sim`'s layer, 1 024 packets
# each, and the GPU offering one triggering write every `interval` cycles from the entry's
# arming, initializer included.
ON_THE_FLY = {"bias_relu": {"rows": 512, "channels": 16}, "bn_stats": {"rows": 512, "channels": 16}}
# A stream measures the engine's pace only if the trigger's event queue cannot hold a good
# part of it: at least this many times the queue's events.
QUEUES_PER_STREAM = 4
INTERVALS = {"default": (1, 2, 3, 4, 6, 8), "channel": (1, 2, 4), "fpga": (1, 2, 4, 8)}
# Beside them, the stream at one write every 4 cycles started this long after the arming,
# when the initializers have ended: the stall cycles the initializer adds are the difference.
INITIALIZED_CYCLES = 3000


def _bit_exact_run(name, problem, inputs, golden, what, **options):
    """``run_kernel_rtl`` of ``name`` with ``options``; ``RuntimeError`` naming ``what`` when
    the run did not complete bit-exact against ``golden``: a figure of a wrong run is none."""
    run = run_kernel_rtl(name, problem, inputs=inputs, **options)
    if run.error is not None or not run.complete or differing_elements(run.outputs, golden):
        raise RuntimeError(f"{name} {what}: the RTL run did not complete bit-exact ({run.error})")
    return run


def _stream_launch(name, problem, config_name, seed):
    """The named configuration, the launch, its inputs and its golden outputs of a GPU
    stream of ``name``; ``ValueError`` when its triggering writes are too few for the
    configuration's event queue (:data:`QUEUES_PER_STREAM`): a stall-free stream would then
    say nothing of the engine's pace."""
    config = named_config(config_name)
    launch = kernel(name).launch(problem)
    queue = config.trigger.event_queue_depth
    if launch.expected_triggers < QUEUES_PER_STREAM * queue:
        raise ValueError(f"{launch.expected_triggers} triggering writes are fewer than "
                         f"{QUEUES_PER_STREAM} times the event queue of {queue} in configuration "
                         f"{config_name}: the queue would hide the engine's pace")
    inputs = random_inputs(launch, seed)
    _, golden, _ = reference_outputs(launch, inputs)
    return config, launch, inputs, golden


def _stream_record(run, interval):
    """One run of a GPU stream at a write every ``interval`` cycles: its cycles, the GPU's
    stall cycles (those before the first write was taken apart) and the tail after the
    last write."""
    measured = run.measurements
    return {"interval_cycles": interval, "cycles": run.cycles,
            "gpu_stall_cycles": measured["stall_cycles"],
            "first_write_stall_cycles": measured["first_write_stall_cycles"],
            "later_stall_cycles": measured["stall_cycles"] - measured["first_write_stall_cycles"],
            "tail_cycles": measured["tail_cycles"]}


def on_the_fly(name, problem, config_name="default", intervals=INTERVALS["default"], seed=1):
    """Cycles and GPU stall cycles of ``name`` in the named configuration ``config_name``
    with the GPU offering a triggering write every ``interval`` cycles from the arming:
    all stall cycles, those before the first write was taken (the initializer's), the
    cycles from the last write to completion (the finalizer's), and the highest such rate
    with no stall cycle."""
    config, launch, inputs, golden = _stream_launch(name, problem, config_name, seed)
    runs = []
    for interval in intervals:
        run = _bit_exact_run(name, problem, inputs, golden,
                             f"at one write per {interval} cycles in configuration {config_name}",
                             seed=seed, gpu_interval=interval, config=config)
        runs.append(_stream_record(run, interval))
    stall_free = [run["interval_cycles"] for run in runs if run["gpu_stall_cycles"] == 0]
    # What the initializer adds: the same stream at one write every 4 cycles, started once
    # the initializer has surely ended, against the run from the arming.
    late = _bit_exact_run(name, problem, inputs, golden,
                          f"started {INITIALIZED_CYCLES} cycles after the arming in "
                          f"configuration {config_name}",
                          seed=seed, gpu_interval=4, gpu_delay=INITIALIZED_CYCLES, config=config)
    initialized = {"interval_cycles": 4, "gpu_delay_cycles": INITIALIZED_CYCLES,
                   "gpu_stall_cycles": late.measurements["stall_cycles"],
                   "tail_cycles": late.measurements["tail_cycles"]}
    return {"kernel": name, "packets": launch.expected_triggers, "init_threads": launch.init_threads,
            "config": config_name,
            "engine": {"sub_cores": config.engine.sub_cores, "slots": config.engine.slots,
                       "in_flight": config.engine.in_flight},
            "runs": runs, "started_after_the_initializer": initialized,
            "highest_stall_free_writes_per_cycle":
                round(1 / min(stall_free), 3) if stall_free else None}


# Every write-triggered kernel a producer's output stream runs, with the write interval it
# must take without stalling the GPU: the A100's share of a slice (one write every 4
# cycles), or, where the kernel's own memory accesses leave no room at 4, the next interval
# above its memory bound.
STREAM_TARGETS = {
    **{name: 4 for name in ("bias_relu", "relu_fwd", "relu_bwd", "scale_fwd", "add", "axpy",
                            "bn_stats", "bn_bwd_stats", "layernorm_stats",
                            "layernorm_bwd_stats", "softmax_max", "softmax_bwd_dot")},
    "dropout_fwd": 5, "where_fwd": 5, "sgd_momentum": 6,
}
STREAM_INTERVALS = (1, 2, 4)
STREAM_CONFIGS = ("default", "channel")
# Streams long enough that the trigger's event queue (32 events in `default`, 128 in
# `channel`) cannot hide an engine slower than the GPU (:data:`QUEUES_PER_STREAM`):
# 1 024 triggering writes, 768 for rows of BERT-base's 768
# columns (96 sectors a row, where the per-row work weighs what it does in a model).
STREAM_SIZES = {
    ("elements",): {"elements": 8192},
    ("rows", "channels"): {"rows": 512, "channels": 16},
    ("rows", "columns"): {"rows": 8, "columns": 768},
}


def stream_rates(name, config_name="default", seed=1):
    """GPU stall cycles of ``name`` (:data:`STREAM_SIZES`) from the arming in
    configuration ``config_name``, the GPU offering a write
    every 1, 2 and 4 cycles, at its memory bound (its memory accesses per sector, the
    triggering write included, at the port's one a cycle) and at its target interval."""
    problem = STREAM_SIZES[KERNELS[name].dims]
    config, launch, inputs, golden = _stream_launch(name, problem, config_name, seed)
    packets = launch.expected_triggers

    def run_at(interval):
        run = _bit_exact_run(name, problem, inputs, golden,
                             f"at one write per {interval} cycles in configuration {config_name}",
                             seed=seed, gpu_interval=interval, config=config)
        return run, _stream_record(run, interval)

    first, record = run_at(STREAM_INTERVALS[0])
    runs = {STREAM_INTERVALS[0]: record}
    # The engine's own accesses over the packets, rounded: the initializer's and the
    # finalizer's few are not a sector's.
    accesses = 1 + first.measurements["ndp_memory_requests"] / packets
    memory_interval = max(1, round(accesses))
    for interval in sorted(set(STREAM_INTERVALS) | {memory_interval, STREAM_TARGETS[name]}):
        if interval not in runs:
            runs[interval] = run_at(interval)[1]
    stall_free = [interval for interval, run in runs.items() if run["gpu_stall_cycles"] == 0]
    target = STREAM_TARGETS[name]
    return {"kernel": name, "config": config_name, "problem": dict(problem), "packets": packets,
            "memory_accesses_per_packet": round(accesses, 3),
            "memory_bound_interval_cycles": memory_interval,
            "target_interval_cycles": target,
            "stall_free_at_target": runs[target]["gpu_stall_cycles"] == 0,
            "shortest_stall_free_interval_cycles": min(stall_free) if stall_free else None,
            "runs": [runs[interval] for interval in sorted(runs)]}


# A reduction's tail, from the GPU's last triggering write to the entry's completion (the
# finalizer's work, and what of the main phase is left): ResNet-50's 256 channels over 256
# rows, BERT-base's 768 columns over 64 rows (as many as the partials of both statistics
# leave room for in the scratchpad), the GPU writing at the A100's share of a slice.
TAILS = {"bn_stats": {"rows": 256, "channels": 256}, "layernorm_stats": {"rows": 64, "columns": 768}}
TAIL_INTERVAL = 4


def finalizer_tail(name, problem, interval=TAIL_INTERVAL, config=KERNEL_CONFIG, seed=1):
    """``name`` with the GPU offering one triggering write every ``interval`` cycles from
    :data:`INITIALIZED_CYCLES` after the arming: the stream's cycles (from its first offer
    to its last write taken, stalls included), the tail after it, and the tail's share."""
    launch = kernel(name).launch(problem)
    inputs = random_inputs(launch, seed)
    _, golden, _ = reference_outputs(launch, inputs)
    run = _bit_exact_run(name, problem, inputs, golden, str(problem), seed=seed,
                         gpu_interval=interval, gpu_delay=INITIALIZED_CYCLES, config=config)
    last_write = run.measurements["gpu_last_request_cycles"]
    stream = last_write - INITIALIZED_CYCLES
    tail = run.cycles - last_write
    return {"kernel": name, "problem": dict(problem), "packets": launch.expected_triggers,
            "final_threads": launch.final_threads, "interval_cycles": interval,
            "stream_cycles": stream, "gpu_stall_cycles": run.measurements["stall_cycles"],
            "tail_cycles": tail, "tail_share": round(tail / stream, 4)}


def bench_kernels_on_the_fly(quick=False):
    """``bias_relu`` and ``bn_stats`` under GPU write streams of several rates from the
    arming, in each named configuration; every write-triggered kernel of
    :data:`STREAM_TARGETS` in each configuration of :data:`STREAM_CONFIGS`; and the
    reductions' tails at model sizes (``quick``: the default configuration's two kernels
    at one write every 1 and 4 cycles, nothing else)."""
    configurations = {"default": (1, 4)} if quick else INTERVALS
    result = {config_name: [on_the_fly(name, problem, config_name, intervals)
                            for name, problem in ON_THE_FLY.items()]
              for config_name, intervals in configurations.items()}
    if not quick:
        result["stream_kernels"] = {config_name: [stream_rates(name, config_name)
                                                  for name in STREAM_TARGETS]
                                    for config_name in STREAM_CONFIGS}
        result["tails"] = [finalizer_tail(name, problem) for name, problem in TAILS.items()]
    return result
