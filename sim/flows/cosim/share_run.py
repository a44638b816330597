"""An :class:`~matndp.sim.flows.cosim.iteration.IterationShare` through the batch harness: one job, every check.

The job: the whole share's memory loaded once; then, per step, the tiering stall as an
idle phase, and per stage the runtime programming the stage's kernels, arguments and
entries, the stage's requests as one phase that ends when all are sent, every read is
answered and the first kernel completes, one phase more per further kernel (the runtime
acknowledging, as an interrupt handler does), then the runtime reading the entries'
counters and disabling them. At the end an idle phase lets the engine's last writes land
and memory is dumped.

Checks: the GPU path and memory over the whole run (:func:`~matndp.sim.batch.check.check_gpu_path`),
each stage's trigger events against the accesses in the ranges programmed for it, each
entry complete with every trigger counted and none drained, and each launch's outputs bit
for bit against the numpy golden and the instruction-set simulator.
"""

from dataclasses import dataclass, replace

import numpy as np

from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.batch.check import CheckFailed, check_events, check_gpu_path
from matndp.sim.batch.job import BatchJob
from matndp.sim.flows.kernel_batch import AcknowledgeCompleted, EntryCounters, check_launches
from matndp.sim.batch.parameters import BatchTiming, HarnessShape
from matndp.sim.batch.run import run_batch
from matndp.sim.batch.stimulus import MemoryImage, RequestStream


__all__ = ["build_job", "run_share", "check_runs", "shape_for", "ShareRun",
           "StageSetup", "StageTeardown", "MEMORY_LATENCY"]


# HBM read latency seen by a slice, in slice cycles (about 100 ns at 1.2 GHz).
MEMORY_LATENCY = 120
SETTLE_CYCLES = 256


@dataclass(frozen=True)
class StageSetup:
    """Runtime step: load each kernel not loaded yet, write the argument blocks, program
    entry *i* with launch *i*, let irq follow them all; returns the FilterRanges."""
    launches: tuple           # (image, arguments, entry dict)

    def __call__(self, runtime):
        ranges = []
        for index, (image, arguments, entry) in enumerate(self.launches):
            loaded = runtime.kernels.get(image.name) or runtime.load_kernel(image)
            runtime.write_arguments(index, list(arguments))
            filter_range = loaded.filter_range(entry["base"], entry["size"], on_write=entry["on_write"],
                                               on_read=entry["on_read"], expected=entry["expected"],
                                               init_threads=entry["init_threads"],
                                               final_threads=entry["final_threads"], arg_index=index)
            runtime.program(index, filter_range)
            ranges.append(filter_range)
        runtime.enable_interrupts((1 << len(self.launches)) - 1)
        return ranges


@dataclass(frozen=True)
class StageTeardown:
    """Runtime step: the counters of the stage's entries, then disable them."""
    entries: int

    def __call__(self, runtime):
        counters = EntryCounters(self.entries)(runtime)
        for index in range(self.entries):
            runtime.disable(index)
        return counters


@dataclass
class _StageKeys:
    step: int
    stage: object
    setup: str | None
    phases: list
    teardown: str | None
    completion: str | None


def _stream(stage, config, first_id):
    ids = (first_id + np.arange(len(stage), dtype=np.uint64)) % np.uint64(1 << config.id_width)
    return RequestStream(config, addr=stage.addr, write=stage.write, data=stage.data,
                         mask=stage.mask, id=ids, gap=stage.gap)


def _timing(share, latency):
    setup = share.setup
    return BatchTiming.pressure(setup.pressure, latency=latency, interval=share.memory_interval,
                                reorder=4, seed=setup.seed + 1)


def shape_for(shares, config=KERNEL_CONFIG):
    """The harness that holds ``shares``: the default build when their images' regions fit
    its region map, else one with the next power of two of entries. The memory is sized by
    each job's image when it is loaded, so a larger share needs no other build."""
    shape = HarnessShape()
    regions = max(_image(share, config).region_count for share in shares)
    if regions > shape.regions:
        shape = replace(shape, regions=1 << (regions - 1).bit_length())
    return shape


def build_job(share, *, config=KERNEL_CONFIG, shape=None, latency=MEMORY_LATENCY):
    """The :class:`~matndp.sim.batch.job.BatchJob` of ``share`` and the keys of its steps and dump."""
    shape = shape or shape_for([share], config)
    job = BatchJob(config, shape=shape, timing=_timing(share, latency))
    _prologue(job)
    keys, dump, _ = _add_share(job, share, config, 0)
    return job, keys, dump


def _prologue(job):
    job.runtime("probe")
    job.runtime("set_watchdog", 1 << 24)


def _image(share, config):
    image = MemoryImage(config.sector_bytes)
    for addr, data in share.image:
        image.add(addr, data)
    return image


def _add_share(job, share, config, next_id):
    job.load(image=_image(share, config))
    keys = []
    for number, step in enumerate(share.steps):
        stall = step.stall_cycles
        stall_key = job.run(until=(), budget=stall) if stall else None
        for stage in step.stages:
            setup_key = completion = teardown = None
            count = len(stage.launches)
            if count:
                setup_key = job.runtime(StageSetup(tuple(
                    (plan.spec.image, tuple(plan.arguments), dict(plan.entry)) for plan in stage.launches)))
            phases = []
            stream = _stream(stage, config, next_id)
            next_id += len(stage)
            depth = job.shape.depth
            for start in range(0, len(stage), depth):
                # A stage longer than the harness's request memory goes in chunks.
                job.load(requests=stream[start:start + depth])
                last = start + depth >= len(stage)
                until = (("sent", "answered", "irq") if count else ("sent", "answered")) if last else ("sent",)
                phases.append((job.run(until=until), False))
            everyone = (1 << count) - 1
            for _ in range(count - 1):
                job.runtime(AcknowledgeCompleted(everyone))
                phases.append((job.run(until=("irq",)), False))
            if stage.idle_after:
                phases.append((job.run(until=(), budget=stage.idle_after), True))
            if count:
                completion = job.runtime(AcknowledgeCompleted(everyone))
                teardown = job.runtime(StageTeardown(count))
            keys.append(_StageKeys(number, stage, setup_key, phases, teardown, completion))
        step.keys = {"stall": stall_key}
    # The engine's last writes land before memory is dumped (and replaced by the next image).
    job.run(until=(), budget=SETTLE_CYCLES)
    return keys, job.dump(), next_id


class _Window:
    """A run's logs restricted to cycles [first, last], for the checks of one stage."""

    def __init__(self, result, entries, first, last):
        self.result, self.first, self.last = result, first, last
        self.job = type("WindowJob", (), {"entries": entries})()

    def log(self, name):
        columns = self.result.log(name)
        keep = (columns["cycle"] >= self.first) & (columns["cycle"] <= self.last)
        return {key: value[keep] for key, value in columns.items()}


class ShareRun:
    """What running a share gave: the batch ``result``, per stage its phases' measurements,
    counters and outputs, and :meth:`check`."""

    def __init__(self, share, job, keys, dump, result):
        self.share, self.job, self.keys, self.result = share, job, keys, result
        self.image = result.image(dump)
        self.stages = []
        for stage_keys in keys:
            stage = stage_keys.stage
            phases = [{**result[key], "idle": idle} for key, idle in stage_keys.phases]
            outputs = [plan.outputs(lambda region: self.image.read(region["addr"], region["bytes"]))
                       for plan in stage.launches]
            self.stages.append({
                "step": stage_keys.step, "stage": stage, "phases": phases,
                "first_cycle": phases[0]["start_cycle"] if phases else None,
                "last_cycle": phases[-1]["end_cycle"] if phases else None,
                "ranges": result[stage_keys.setup] if stage_keys.setup else [],
                "completion": result[stage_keys.completion] if stage_keys.completion else None,
                "counters": result[stage_keys.teardown] if stage_keys.teardown else None,
                "outputs": outputs})
        self.stalls = {number: result[step.keys["stall"]] for number, step in enumerate(share.steps)
                       if step.keys["stall"]}

    def check(self, *, iss=True):
        """Every check (see the module); raises :class:`~matndp.sim.batch.check.CheckFailed`, returns
        a summary."""
        return check_runs([self], iss=iss)

    def check_stages(self, *, iss=True):
        """The checks of this share's stages: events, completions, outputs."""
        for stage in self.stages:
            if any(phase["reason"] != "until" for phase in stage["phases"] if not phase["idle"]):
                raise CheckFailed(f"{stage['stage'].label}: a phase ran out of cycles before "
                                  f"its conditions held")
        events = {"write_events": 0, "read_events": 0}
        launches = 0
        for stage in self.stages:
            label = stage["stage"].label
            if stage["first_cycle"] is None:
                continue
            entries = dict(enumerate(stage["ranges"]))
            window = _Window(self.result, entries, stage["first_cycle"], stage["last_cycle"])
            try:
                counted = check_events(window, entries)
            except CheckFailed as failure:
                raise CheckFailed(f"{label}: {failure}") from None
            for key in events:
                events[key] += counted[key]
            if not stage["stage"].launches:
                continue
            check_launches(stage["stage"].launches, stage["completion"], stage["counters"],
                           stage["outputs"], iss=iss, where=f"{label}: ")
            launches += len(stage["stage"].launches)
        return {**events, "launches_bit_exact": launches}


def check_runs(runs, *, iss=True):
    """Every check of ``runs`` (the :class:`ShareRun` s of one job): the GPU path and memory
    once over the whole job, each share's stages, and no trigger event outside every
    stage. Raises :class:`~matndp.sim.batch.check.CheckFailed`; returns a summary."""
    summary = check_gpu_path(runs[0].result)
    totals = {"write_events": 0, "read_events": 0, "launches_bit_exact": 0}
    for run in runs:
        for key, value in run.check_stages(iss=iss).items():
            totals[key] += value
    logged = len(runs[0].result.log("events")["cycle"])
    counted = totals["write_events"] + totals["read_events"]
    if logged != counted:
        raise CheckFailed(f"{logged - counted} of the {logged} trigger events fall outside "
                          f"every stage's cycles")
    summary.update(totals)
    return summary


def run_share(share, *, simulator="verilator", directory=None, waves=False, traceable=False,
              trace_scopes=None):
    """Build and run the job of ``share``; returns a :class:`ShareRun`. ``waves`` records
    the run's waveform (of ``trace_scopes``); ``traceable`` runs on the traced build without
    recording, so that a run with waves after it needs no build of its own."""
    job, keys, dump = build_job(share)
    result = run_batch(job, simulator=simulator, directory=directory, waves=waves,
                       traceable=traceable, trace_scopes=trace_scopes)
    return ShareRun(share, job, keys, dump, result)
