"""Library kernels through the batch harness: the launches of
:func:`~matndp.sim.flows.kernel_run.plan_launches` (launch *i* on filter entry *i* and argument
block *i*) become a :class:`~matndp.sim.batch.job.BatchJob` — the tensors in the memory image, the kernels,
arguments and entries programmed by the runtime, the GPU's triggering accesses interleaved
with unrelated traffic and idle gaps, split into chunks — and the run's outputs are checked
bit for bit against the instruction-set simulator and the numpy goldens.
"""

from dataclasses import dataclass
from itertools import zip_longest

import numpy as np

from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.flows.kernel_run import (differing_elements, golden_outputs, plan_launches,
                                         reference_outputs)
from matndp.sim.batch.check import CheckFailed, check_events, check_gpu_path
from matndp.sim.batch.job import BatchJob
from matndp.sim.batch.parameters import BatchTiming, HarnessShape
from matndp.sim.batch.run import replay_batch, run_batch
from matndp.sim.batch.stimulus import MemoryImage, RequestStream


__all__ = ["KernelBatch", "KernelBatchResult", "KernelSetup", "check_launches", "AcknowledgeCompleted", "EntryCounters",
           "plain_error", "add_launch_tensors"]


UNRELATED_BASE = 0x0F_0000
UNRELATED_SECTORS = 64


def add_launch_tensors(image, plans):
    """Every tensor of ``plans`` (:class:`~matndp.sim.flows.kernel_run.LaunchPlan` s) placed
    in ``image`` (a :class:`~matndp.sim.batch.stimulus.MemoryImage`): the inputs with their
    values, the rest zeroed, each a whole number of sectors. Returns ``image``."""
    sector = image.sector_bytes
    for plan in plans:
        placed = {name: raw for name, _, raw in plan.place}
        for tensor in plan.launch.tensors:
            size = plan.launch.allocation(tensor.name)
            region = np.zeros(-(-size // sector) * sector, dtype=np.uint8)
            raw = placed.get(tensor.name)
            if raw is not None:
                region[:raw.size] = raw
            image.add(plan.addresses[tensor.name], region)
    return image


@dataclass(frozen=True)
class KernelSetup:
    """Runtime step: load a launch's kernel, write its argument block and program its
    entry; returns the :class:`~matndp.host.runtime.FilterRange` programmed."""
    index: int
    image: object
    arguments: tuple
    entry: dict

    def __call__(self, runtime):
        loaded = runtime.load_kernel(self.image)
        runtime.write_arguments(self.index, list(self.arguments))
        entry = loaded.filter_range(arg_index=self.index, **self.entry)
        runtime.program(self.index, entry)
        return entry


@dataclass(frozen=True)
class AcknowledgeCompleted:
    """Runtime step, as an interrupt handler: leave ``irq`` enabled only for the entries of
    ``mask`` not yet complete (all of them once every one is, so that a phase waiting for
    ``irq`` ends at once); returns ``(COMPLETE, the first error)``."""
    mask: int

    def __call__(self, runtime):
        done = runtime.done_mask() & self.mask
        runtime.enable_interrupts(self.mask & ~done or self.mask)
        return done, plain_error(runtime.error())


def plain_error(error):
    """The runtime's recorded error as plain values (entry, pc, cause name), or None."""
    return None if error is None else (error[0], error[1], error[2].name)


@dataclass(frozen=True)
class EntryCounters:
    """Runtime step: each entry's HITS, COMPLETED and DRAINED and the engine's counters."""
    entries: int

    def __call__(self, runtime):
        counters = {"entries": [{"hits": runtime.hits(index), "completed": runtime.completed(index),
                                 "drained": runtime.drained(index)} for index in range(self.entries)],
                    "stall_cycles": runtime.stall_cycles(),
                    "error": plain_error(runtime.error())}
        for name in ("instructions", "ndp_requests"):
            counters[name] = runtime.read_fields(name)["count"]
        return counters


class KernelBatch:
    """Launches (:class:`~matndp.sim.flows.kernel_run.Launch`) as one batch job.

    unrelated_per_access: unrelated GPU requests (reads and writes of a region no entry
    watches) before each triggering access. max_gap: each GPU request waits 0..max_gap idle
    cycles (uniform) after the previous one. chunk: requests per chunk (default the
    harness's depth); each chunk is one phase, the register bus reachable in between.
    """

    def __init__(self, launches, *, seed=1, config=KERNEL_CONFIG, shape=HarnessShape(),
                 timing=BatchTiming(), unrelated_per_access=0, max_gap=0, chunk=None,
                 watchdog=1 << 24, settle=0, logs=None):
        if not launches:
            raise ValueError("KernelBatch needs at least one launch")
        if len(launches) > config.trigger.filter_entries:
            raise ValueError(f"{len(launches)} launches need as many filter entries; the "
                             f"configuration has {config.trigger.filter_entries}")
        chunk = shape.depth if chunk is None else chunk
        if isinstance(chunk, bool) or not isinstance(chunk, int) or not 1 <= chunk <= shape.depth:
            raise ValueError(f"chunk must be 1..{shape.depth} requests (HarnessShape.depth), "
                             f"not {chunk!r}")
        for name, value in (("unrelated_per_access", unrelated_per_access), ("max_gap", max_gap),
                            ("settle", settle)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, not {value!r}")
        self.config = config
        self.plans = plan_launches(launches, seed=seed, config=config)
        extra = {} if logs is None else {"logs": logs}
        job = self.job = BatchJob(config, shape=shape, timing=timing, **extra)
        sector = config.sector_bytes
        rng = np.random.default_rng(seed + 17)

        image = add_launch_tensors(MemoryImage(sector), self.plans)
        if unrelated_per_access:
            image.add(UNRELATED_BASE, rng.integers(0, 256, UNRELATED_SECTORS * sector, dtype=np.uint8))
        job.load(image=image)

        job.runtime("probe")
        job.runtime("set_watchdog", watchdog)
        everyone = (1 << len(self.plans)) - 1
        job.runtime("write_fields", "irq_enable", mask=everyone)
        self.setup_keys = []
        for index, plan in enumerate(self.plans):
            step = KernelSetup(index, plan.spec.image, tuple(plan.arguments), dict(plan.entry))
            self.setup_keys.append(job.runtime(step))

        self.stream = self._stream(rng, unrelated_per_access, max_gap)
        if settle:
            job.run(until=(), budget=settle)
        keys = []
        for start in range(0, len(self.stream), chunk):
            last = start + chunk >= len(self.stream)
            job.load(requests=self.stream[start:start + chunk])
            keys.append(job.run(until=("sent", "answered", "irq") if last else ("sent",)))
        self.phase_keys = keys
        # The stream's last phase ends as the first entry completes; each round waits for
        # one more, with no Python in its cycles.
        for _ in range(len(self.plans) - 1):
            job.runtime(AcknowledgeCompleted(everyone))
            keys.append(job.run(until=("irq",)))
        self.completion_key = job.runtime(AcknowledgeCompleted(everyone))
        # Let the engine's last writes reach memory before the image is read.
        job.run(until=(), budget=256)
        self.counters_key = job.runtime(EntryCounters(len(self.plans)))
        self.dump_key = job.dump()

    def _stream(self, rng, unrelated_per_access, max_gap):
        config = self.config
        sector = config.sector_bytes
        full = (1 << sector) - 1
        # The GPU interleaves the launches' triggering accesses, one of each in turn.
        order = [(number, position) for group in zip_longest(*[range(len(plan.trigger))
                                                                for plan in self.plans])
                 for number, position in enumerate(group) if position is not None]
        count = len(order) * (1 + unrelated_per_access)
        addr = np.zeros(count, dtype=np.uint64)
        write = np.zeros(count, dtype=bool)
        data = np.zeros((count, sector), dtype=np.uint8)
        mask = np.full(count, full, dtype=np.uint64)
        triggering = np.arange(count) % (1 + unrelated_per_access) == unrelated_per_access
        rows = np.flatnonzero(triggering)
        for row, (number, position) in zip(rows, order):
            plan = self.plans[number]
            offset, byte_mask = plan.trigger[position]
            addr[row] = plan.entry["base"] + offset
            if plan.write_triggered:
                write[row] = True
                data[row] = plan.trigger_bytes[offset:offset + sector]
                mask[row] = byte_mask
        others = np.flatnonzero(~triggering)
        write[others] = rng.random(len(others)) < 0.5
        addr[others] = UNRELATED_BASE + sector * rng.integers(0, UNRELATED_SECTORS, len(others))
        data[others] = np.where(write[others, None],
                                rng.integers(0, 256, (len(others), sector), dtype=np.uint8), 0)
        ids = np.arange(count, dtype=np.uint64) % np.uint64(1 << config.id_width)
        gaps = rng.integers(0, max_gap + 1, count) if max_gap else None
        return RequestStream(config, addr=addr, write=write, data=data, mask=mask, id=ids, gap=gaps)

    def run(self, *, simulator="verilator", directory=None, replay=False, waves=False):
        """Run the job (``replay``: cycle by cycle with the Python drivers instead of the
        harness); returns a :class:`KernelBatchResult`."""
        if replay:
            result = replay_batch(self.job, simulator=simulator, directory=directory)
        else:
            result = run_batch(self.job, simulator=simulator, directory=directory, waves=waves)
        return KernelBatchResult(self, result)


def check_launches(plans, completion, counters, outputs, *, iss=True, where=""):
    """The checks of one stage of kernel launches once it has run: no engine error, every
    launch of ``plans`` (:class:`LaunchPlan` s on entries 0, 1, … in order) complete with
    each of its triggers counted, and its ``outputs`` bit-exact against the numpy golden
    and (``iss``) the instruction-set simulator. ``completion`` is ``(done mask, error)``
    as read from the status registers, ``counters`` the counters' snapshot; ``where``
    prefixes every message. Raises :class:`~matndp.sim.batch.check.CheckFailed`."""
    done, error = completion
    if error is not None:
        raise CheckFailed(f"{where}the engine recorded an error: {error}")
    everyone = (1 << len(plans)) - 1
    if done & everyone != everyone:
        raise CheckFailed(f"{where}COMPLETE reads {done:#x}; expected {everyone:#x}")
    for index, plan in enumerate(plans):
        name = f"{where}launch {index} ({plan.request.name})"
        expected = plan.launch.expected_triggers
        counted = counters["entries"][index]
        if counted != {"hits": expected, "completed": expected, "drained": 0}:
            raise CheckFailed(f"{name}: {counted}; expected {expected} hits and completions, "
                              f"none drained")
        references = [("the golden", golden_outputs(plan.launch, plan.inputs))]
        if iss:
            references.append(("the ISS", reference_outputs(plan.launch, plan.inputs)[0]))
        for what, reference in references:
            differing = differing_elements(outputs[index], reference)
            if differing:
                raise CheckFailed(f"{name} against {what}: elements differ {differing}")


class KernelBatchResult:
    """A :class:`KernelBatch`'s run: ``result`` (the :class:`~matndp.sim.batch.run.BatchResult`), each
    launch's ``outputs`` read from the dumped memory."""

    def __init__(self, batch, result):
        self.batch = batch
        self.result = result
        image = result.image(batch.dump_key)
        self.outputs = [plan.outputs(lambda region: image.read(region["addr"], region["bytes"]))
                        for plan in batch.plans]
        self.done_mask, self.error = result[batch.completion_key]
        self.counters = result[batch.counters_key]
        self.entries = {index: result[key] for index, key in enumerate(batch.setup_keys)}

    def check(self, *, iss=True):
        """Every check: the GPU path and memory, the events, each entry complete without
        error with every trigger counted, and every output bit-exact against the numpy
        golden and (``iss``) the instruction-set simulator. Raises
        :class:`~matndp.sim.batch.check.CheckFailed`; returns a summary."""
        batch = self.batch
        summary = {"phases": [self.result[key]["reason"] for key in batch.phase_keys]}
        if any(reason != "until" for reason in summary["phases"]):
            raise CheckFailed(f"a phase ran out of cycles before its conditions held: {summary['phases']}")
        summary.update(check_gpu_path(self.result))
        logs = batch.job.logs
        if "events" in logs:
            summary.update(check_events(self.result, self.entries))
        check_launches(batch.plans, (self.done_mask, self.error), self.counters, self.outputs, iss=iss)
        summary["launches"] = [plan.request.name for plan in batch.plans]
        return summary
