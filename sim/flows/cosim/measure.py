"""What a co-simulation measured, as plain data: per stage and per op the RTL's cycles
beside the host model's, the memory slots the GPU, the tier copies and the engine took,
the kernels' cycles per sector under the real mix, and the calibration they make.
"""

import numpy as np

from matndp.host.calibration import DEFAULT_KERNELS, SCHEMA, configuration_record
from matndp.sim.designs import KERNEL_CONFIG
from matndp.host.kernels.library import OPS


__all__ = ["measure", "share_measures", "overlap_figures", "overlap_saving", "merged_sweeps", "kernel_costs",
           "calibration_document", "SLOT_SOURCES"]


SLOT_SOURCES = ("gpu", "migration", "sweep", "engine")
# A sweep shorter than this many sectors measures its fixed costs (arming, the memory's
# latency, the finalizer), not a per-sector pace.
MIN_SWEEP_TRIGGERS = 64


def _request_sources(run):
    """The source of each GPU-port request, in the order the slice took them."""
    return np.concatenate([stage["stage"].source for stage in run.stages if len(stage["stage"])]) \
        if run.stages else np.zeros(0, dtype=object)


def _memory_sources(run):
    """(cycle, source) of every request memory accepted."""
    memory = run.result.log("mem_requests")
    source_bit = np.uint64(run.job.config.mem_id_width - 1)
    from_engine = (memory["id"] >> source_bit) == 1
    sources = np.full(len(memory["cycle"]), "engine", dtype=object)
    # GPU-port requests reach memory in the order the slice took them (check_gpu_path).
    sources[~from_engine] = _request_sources(run)[:int((~from_engine).sum())]
    return memory["cycle"].astype(np.int64), sources


def _stall_spans(run):
    """(start, end) cycles of each tiering stall phase, in order."""
    spans = []
    for number, phase in sorted(run.stalls.items()):
        spans.append((phase["start_cycle"], phase["start_cycle"] + phase["cycles"]))
    return spans


def busy_cycles(run, cycles):
    """``cycles`` on the run's clock with the tiering stalls before them cut out."""
    spans = _stall_spans(run)
    cycles = np.asarray(cycles, dtype=np.int64)
    if not spans:
        return cycles
    ends = np.array([end for _, end in spans], dtype=np.int64)
    lengths = np.cumsum([end - start for start, end in spans])
    before = np.searchsorted(ends, cycles, side="right")
    return cycles - np.concatenate([[0], lengths])[before]


def slot_use(run, bins=60):
    """Memory slots (one per ``memory_interval`` cycles) in ``bins`` spans of the run with
    its tiering stalls cut out (memory is idle in them): the share each source took, the
    rest idle."""
    cycles, sources = _memory_sources(run)
    stalled = sum(end - start for start, end in _stall_spans(run))
    busy = busy_cycles(run, cycles)
    end = max(1, int(run.result.cycles) - stalled)
    edges = np.linspace(0, end, bins + 1)
    interval = run.share.memory_interval
    slots = np.diff(edges) / interval
    use = {}
    for source in SLOT_SOURCES:
        counts, _ = np.histogram(busy[sources == source], bins=edges)
        use[source] = (counts / slots).tolist()
    totals = {source: int((sources == source).sum()) for source in SLOT_SOURCES}
    return {"edges_cycles": edges.tolist(), "fraction": use, "requests": totals,
            "slots": int(end // interval), "stall_cycles_cut": int(stalled)}


def _delays(delay):
    if not len(delay):
        return None
    return {"min": int(delay.min()), "mean": float(delay.mean()),
            "p99": float(np.percentile(delay, 99)), "max": int(delay.max())}


def gpu_path(run):
    """What the slice cost the GPU port's requests, for the GPU's own (GPU stages) and the
    sweeps apart: the cycles from the slice taking a request to memory accepting it (the
    trigger's register stage, the arbiter sharing the slot with the engine, memory
    back-pressure), the cycles the trigger held the port for a full event queue, and the
    cycles the port waited for a read id still in flight."""
    taken = run.result.log("gpu_requests")["cycle"].astype(np.int64)
    memory = run.result.log("mem_requests")
    source_bit = np.uint64(run.job.config.mem_id_width - 1)
    accepted = memory["cycle"][(memory["id"] >> source_bit) == 0].astype(np.int64)
    count = min(len(taken), len(accepted))
    delay = accepted[:count] - taken[:count]
    kinds = np.concatenate([np.full(len(stage["stage"]), stage["stage"].kind, dtype=object)
                            for stage in run.stages]) if run.stages else np.zeros(0, dtype=object)
    held = {"gpu": 0, "sweep": 0}
    gated = {"gpu": 0, "sweep": 0}
    previous = 0
    for stage in run.stages:
        kind = stage["stage"].kind
        gated[kind] += sum(phase["gated_cycles"] for phase in stage["phases"])
        if stage["counters"]:
            # STALL_CYCLES counts on; a stage without entries cannot be held.
            held[kind] += stage["counters"]["stall_cycles"] - previous
            previous = stage["counters"]["stall_cycles"]
    return {kind: {"requests": int((kinds[:count] == kind).sum()),
                   "to_memory_cycles": _delays(delay[kinds[:count] == kind]),
                   "held_for_full_event_queue_cycles": int(held[kind]),
                   "id_gated_cycles": int(gated[kind])} for kind in ("gpu", "sweep")}


def _stage_row(run, stage, taken_cycles):
    first, last = stage["first_cycle"], stage["last_cycle"]
    triggers = sum(plan.launch.expected_triggers for plan in stage["stage"].launches)
    cycles = (last - first) if first is not None else 0
    sources = stage["stage"].source
    stream = 0
    if first is not None and len(stage["stage"]):
        inside = taken_cycles[(taken_cycles >= first) & (taken_cycles <= last)]
        stream = int(inside.max()) - first + 1 if len(inside) else 0
    return {"label": stage["stage"].label, "kind": stage["stage"].kind,
            "kernels": [plan.request.name for plan in stage["stage"].launches],
            "first_cycle": first, "last_cycle": last, "cycles": cycles,
            "stream_cycles": stream, "tail_cycles": cycles - stream,
            "requests": {source: int((sources == source).sum()) for source in ("gpu", "sweep", "migration")},
            "triggers": triggers,
            "gated_cycles": sum(phase["gated_cycles"] for phase in stage["phases"]),
            "cycles_per_trigger": cycles / triggers if triggers else None}


def measure(run):
    """The measurements of ``run`` (a :class:`~matndp.sim.flows.cosim.share_run.ShareRun`, the job's only share) as
    JSON-able data."""
    measures = share_measures(run)
    measures.update({"cycles": int(run.result.cycles), "gpu_path": gpu_path(run),
                     "slots": slot_use(run)})
    return measures


def share_measures(run, taken=None):
    """Per step and per op of ``run``'s share, the host model's cycles and the RTL's, and
    the kernel costs of its sweeps (``taken``: the cycles of the GPU requests log)."""
    share = run.share
    if taken is None:
        taken = run.result.log("gpu_requests")["cycle"].astype(np.int64)
    stages = [_stage_row(run, stage, taken) for stage in run.stages]
    by_step = {}
    for stage, row in zip(run.stages, stages):
        by_step.setdefault(stage["step"], []).append(row)
    steps = []
    for number, step in enumerate(share.steps):
        rows = by_step.get(number, [])
        stall = run.stalls.get(number, {}).get("cycles", 0)
        steps.append({"op": step.op, "where": step.where, "phase": step.phase,
                      "host_cycles": step.host_cycles, "stall_cycles_host": step.stall_cycles,
                      "stall_cycles": stall, "rtl_cycles": sum(row["cycles"] for row in rows),
                      "first_cycle": rows[0]["first_cycle"] if rows else None,
                      "last_cycle": rows[-1]["last_cycle"] if rows else None,
                      "riders": step.riders, "migrated_sectors": step.migrated_sectors,
                      "concurrent_with": step.concurrent_with,
                      "stages": rows})
    step_of = {step["op"]: step for step in steps}
    ops = []
    for op in share.ops:
        step = step_of.get(op["op"])
        carrier = step_of.get(op["rides_on"]) if op["rides_on"] else None
        rtl = step["rtl_cycles"] if step else (carrier["rtl_cycles"] if carrier else None)
        if step and step["concurrent_with"]:
            measured_as = f"first stage with {step['concurrent_with']}"
        else:
            measured_as = "own step" if step else (f"rides on {op['rides_on']}" if carrier else "not run")
        ops.append({**op, "rtl_cycles": rtl, "measured_as": measured_as, "own_step": step is not None})
    total_rtl = sum(step["rtl_cycles"] for step in steps)
    total_stall = sum(step["stall_cycles"] for step in steps)
    return {"rtl_busy_cycles": total_rtl, "stall_cycles": total_stall,
            "host_cycles": sum(step["host_cycles"] for step in steps),
            "host_stall_cycles": sum(step["stall_cycles_host"] for step in steps),
            "steps": steps, "ops": ops, "kernels": kernel_costs([steps], share.ops, share.plan.calibration),
            "overlap": {"on": share.setup.overlap, "merged": share.overlap.get("merged", []),
                        "host_serial_cycles": share.overlap.get("serial_cycles"),
                        "host_overlapped_cycles": share.overlap.get("overlapped_cycles"),
                        "rtl_busy_cycles": total_rtl}}


def overlap_figures(measures, serial):
    """What the merges of concurrent steps gained (``measures``: :func:`share_measures` of
    the run with them; ``serial``: of the merged steps run one after another,
    :func:`~matndp.sim.flows.cosim.overlap.serial_share`), beside what the host model
    planned: the block's RTL busy cycles as run and one after another (the merged steps'
    serial cycles in place of theirs), and the share of the planned overlap achieved."""
    merged_ops = {step["op"] for step in serial["steps"]}
    overlapped = sum(step["rtl_cycles"] for step in measures["steps"] if step["op"] in merged_ops)
    return overlap_saving({**measures["overlap"], "rtl_merged_steps_overlapped_cycles": overlapped,
                           "rtl_merged_steps_serial_cycles": serial["rtl_busy_cycles"]},
                          serial["rtl_busy_cycles"] - overlapped)


def overlap_saving(figures, saved):
    """``figures`` (``on``, the host model's serial and overlapped cycles, the RTL's busy
    cycles as run) with the RTL's ``saved`` cycles: the RTL one after another, the host
    model's saving and the share of it the RTL achieved."""
    planned = figures["host_serial_cycles"] - figures["host_overlapped_cycles"]
    return {**figures, "rtl_serial_busy_cycles": figures["rtl_busy_cycles"] + saved,
            "rtl_saved_cycles": saved, "host_saved_cycles": planned,
            "achieved": saved / planned if figures["on"] and planned > 0 else None}


def merged_sweeps(serial):
    """The steps of ``serial`` (:func:`share_measures` of the merged steps run one after
    another) with only the sweeps the merges took: each NDP step's first stage (its further
    stages run on their own in the overlapped run too)."""
    return [{**step, "stages": step["stages"][:1]} for step in serial["steps"] if step["where"] != "gpu"]


def kernel_costs(steps_by_slice, ops, calibration):
    """Cycles per trigger sector of each op kernel, from the sweeps of at least
    :data:`MIN_SWEEP_TRIGGERS` sectors (the engine's pace with the sweep and the kernel's
    own accesses sharing the memory slots): the ops' phases summed; a phase that only rode
    on GPU writes, or only ran on short sweeps, keeps the calibration's cost.

    ``steps_by_slice``: the steps of each slice simulated. A phase's cost is the slowest
    slice's cycles over the slices' mean trigger sectors: the host model spreads an op's
    sectors evenly over the slices, so that cost times its sectors per slice is the slowest
    slice's time, which bounds the op (with one slice, that slice's own pace)."""
    per_phase = {}
    for steps in steps_by_slice:
        sums = {}
        for step in steps:
            for stage in step["stages"]:
                if stage["kind"] == "sweep" and stage["triggers"] >= MIN_SWEEP_TRIGGERS:
                    for name in stage["kernels"]:
                        cycles, triggers = sums.get(name, (0, 0))
                        sums[name] = (cycles + stage["cycles"], triggers + stage["triggers"])
        for name, total in sums.items():
            per_phase.setdefault(name, []).append(total)
    costs = {}
    for op in ops:
        name = op["kernel"]
        if not name or name in costs or name not in DEFAULT_KERNELS:
            continue
        phases = OPS[name].phases
        measured = {phase: max(c for c, _ in per_phase[phase]) /
                    (sum(t for _, t in per_phase[phase]) / len(per_phase[phase]))
                    for phase in phases if phase in per_phase}
        if not measured:
            continue
        before = calibration.cost(name)
        parts = []
        for index, phase in enumerate(phases):
            if phase in measured:
                parts.append(measured[phase])
            else:
                # The phase rode on GPU writes: its cost there is the GPU's pace, not its own.
                parts.append(before.stream_cycles if index == 0 else before.after_cycles)
        after = sum(parts[1:]) if len(phases) > 1 else 0.0
        costs[name] = {"cycles_per_packet": sum(parts), "after_cycles_per_packet": after,
                       "measured_phases": sorted(measured), "kept_phases":
                       [phase for phase in phases if phase not in measured],
                       "host_cycles_per_packet": before.cycles_per_packet}
    return costs


def calibration_document(measures, clock_hz):
    """The calibration file (``matndp.ndp_kernels/1``) of the measured kernel costs."""
    kernels = {}
    for name, cost in measures["kernels"].items():
        entry = {"cycles_per_packet": round(cost["cycles_per_packet"], 3)}
        if cost["after_cycles_per_packet"]:
            entry["after_cycles_per_packet"] = round(cost["after_cycles_per_packet"], 3)
        kernels[name] = entry
    return {"schema": SCHEMA, "clock_hz": clock_hz, "ndp_config": configuration_record(KERNEL_CONFIG),
            "kernels": kernels,
            "source": "matndp sim co-simulation (sweep stages of the block's share)"}
