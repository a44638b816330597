"""One round of the soak drawn from a seed: a :class:`~matndp.sim.batch.job.BatchJob` of
stages, and what each stage must give (:class:`Stage`) for :mod:`.check`.

A stage: a new memory image (the launches' tensors, the fault region, the unrelated
region, a failing region, a hole); every armed entry disarmed, the recorded error
cleared; library launches programmed on random entries, a faulting kernel on another;
the GPU's stream (the launches' triggering accesses in a random interleaving, each
launch's in its order, the faulting entry's, unrelated reads and writes, some into
unmapped or failing memory, random ids and idle gaps) in chunks, each with new random
timing, a decoy entry armed before one chunk and disarmed before a later one; then a phase per launch still to complete (``irq``), a
settling phase (long enough for a spinning kernel's watchdog), the status and a dump.
"""

from dataclasses import dataclass, field
import math

import numpy as np

from matndp.host.kernels.library import KERNELS
from matndp.host.kernels.library.spec import LibraryError
from matndp.host.runtime import FilterRange
from matndp.sim.batch.job import BatchJob
from matndp.sim.batch.parameters import BatchTiming, HarnessShape
from matndp.sim.batch.stimulus import MemoryImage, RequestStream
from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.flows.kernel_batch import AcknowledgeCompleted, add_launch_tensors
from matndp.sim.flows.kernel_run import Launch, plan_launches
from matndp.sim.flows.soak.faults import DECOY_KERNEL, FAULT_KERNELS
from matndp.sim.flows.soak.layout import (FAILING, FAULT_REGION, HOLE, TENSOR_BASE,
                                          UNRELATED_REGION, WINDOW)
from matndp.sim.flows.soak.settings import SoakSettings
from matndp.sim.flows.soak.steps import ArmEntries, EntryProgram, PrepareRound, StageReport


__all__ = ["SoakRound", "Stage", "draw_round", "round_rng", "stages_in_round", "draw_timing"]


CONFIG = KERNEL_CONFIG
SECTOR = CONFIG.sector_bytes
FULL_MASK = (1 << SECTOR) - 1
# Cycles a stage settles after its last completion: its faulting kernel's event reaches the
# engine and faults, its last writes reach memory.
SETTLE_CYCLES = 1024
# Problem shapes of the two-dimensional kernels: widths the library takes.
WIDTHS = {"channels": (16, 32), "columns": (32, 64)}


@dataclass
class Stage:
    """What one stage of a round did and must give: its library ``plans`` (on entries
    ``launch_entries``), its ``fault`` (entry, kind, triggers) or None, its ``decoy``
    entry or None, its phases (key, what: ``stream``, ``completion`` or ``settle``),
    and the keys of its arming, status report and dump."""
    number: int
    plans: list
    launch_entries: list
    fault: dict | None
    decoy: int | None
    arm_key: str = ""
    phases: list = field(default_factory=list)
    report_key: str = ""
    dump_key: str = ""

    @property
    def entries(self):
        used = list(self.launch_entries)
        if self.fault is not None:
            used.append(self.fault["entry"])
        if self.decoy is not None:
            used.append(self.decoy)
        return tuple(used)


@dataclass
class SoakRound:
    """Round ``number`` of the soak of ``seed``: its ``job``, its ``stages``, the entries
    in force in each stream phase (``timeline``: phase key, {entry: FilterRange}) and the
    key of its preparation (which returns where each kernel was loaded)."""
    seed: int
    number: int
    settings: SoakSettings
    job: BatchJob
    stages: list
    timeline: list
    prepare_key: str


def round_rng(seed, number):
    """The generator of round ``number`` of the soak of ``seed``: each round is drawn on its
    own, so that one round replays without those before it."""
    return np.random.default_rng([seed, number])


def stages_in_round(number, settings):
    """Round 0 has one stage, each round after it twice as many, up to
    ``settings.stages_per_round``: a short soak is short, a long one has long rounds."""
    return min(settings.stages_per_round, 1 << min(number, 16))


def draw_timing(rng, settings, seed=1, reordering=None):
    """Memory and stream timing drawn at random within ``settings``; ``reordering``: whether
    memory answers out of order (drawn too when None)."""
    if reordering is None:
        reordering = bool(rng.random() < 0.5)
    latency = int(round(math.exp(rng.uniform(0.0, math.log(settings.max_latency)))))
    pauses = {name: 0.0 if rng.random() < 0.25 else float(rng.uniform(0.0, settings.max_pause))
              for name in BatchTiming.pause_names()}
    return BatchTiming(latency=max(1, latency),
                       interval=1 if rng.random() < 0.7 else int(rng.integers(2, 5)),
                       reorder=int(rng.choice([2, 4, 8])) if reordering else 1, seed=seed, **pauses)


def _kernel_pool(rng):
    """Library kernels that fit the instruction memory beside the soak's own."""
    room = CONFIG.engine.instruction_words - sum(len(fault.image.words) for fault in FAULT_KERNELS.values()) \
        - len(DECOY_KERNEL.words)
    pool = []
    for name in rng.permutation(sorted(KERNELS)):
        words = len(KERNELS[name].image.words)
        if words <= room:
            pool.append(str(name))
            room -= words
    return pool


def _problem(rng, name, settings):
    """A random problem kernel ``name`` takes (drawn again until it takes it)."""
    spec = KERNELS[name]
    while True:
        if spec.dims == ("elements",):
            problem = {"elements": int(rng.integers(8, settings.max_elements + 1))}
        else:
            width_name = spec.dims[1]
            width = int(rng.choice(WIDTHS[width_name]))
            rows = int(rng.integers(1, max(2, min(16, settings.max_elements // width)) + 1))
            problem = {"rows": rows, width_name: width}
        try:
            spec.launch(problem)
        except LibraryError:
            continue
        return problem


def _region(rng, bounds):
    return rng.integers(0, 256, bounds[1] - bounds[0], dtype=np.uint8)


def _sectors(rng, bounds, count):
    return (bounds[0] + SECTOR * rng.integers(0, (bounds[1] - bounds[0]) // SECTOR, count)).astype(np.uint64)


class _Round:
    """Builds one round's job."""

    def __init__(self, seed, number, settings):
        self.rng = rng = round_rng(seed, number)
        self.settings = settings
        self.pool = _kernel_pool(rng)
        timing = draw_timing(rng, settings, seed=int(rng.integers(1, 1 << 63)))
        self.job = BatchJob(CONFIG, shape=HarnessShape(), timing=timing)
        images = [fault.image for fault in FAULT_KERNELS.values()] + [DECOY_KERNEL] + \
            [KERNELS[name].image for name in self.pool]
        self.kinds = list(FAULT_KERNELS)
        self.next_kind = int(rng.integers(len(self.kinds)))
        self.timeline = []
        self.stages = []
        self.prepare_key = self.job.runtime(PrepareRound(tuple(images), WINDOW, settings.watchdog))
        for stage in range(stages_in_round(number, settings)):
            self.stages.append(self._stage(stage))

    # --- one stage ----------------------------------------------------------------------------
    def _load_image(self, plans):
        rng = self.rng
        image = MemoryImage(SECTOR)
        image.add(FAULT_REGION[0], _region(rng, FAULT_REGION))
        image.add(UNRELATED_REGION[0], _region(rng, UNRELATED_REGION))
        image.fail(FAILING[0], FAILING[1] - FAILING[0])
        return self.job.load(image=add_launch_tensors(image, plans))

    def _stage(self, number):
        rng, settings, job = self.rng, self.settings, self.job
        entries = [int(index) for index in rng.permutation(CONFIG.trigger.filter_entries)]
        count = int(rng.integers(1, settings.launches + 1))
        names = [str(rng.choice(self.pool)) for _ in range(count)]
        launches = [Launch(name, _problem(rng, name, settings)) for name in names]
        plans = plan_launches(launches, seed=int(rng.integers(1, 1 << 31)), config=CONFIG,
                              base=TENSOR_BASE)
        launch_entries = entries[:count]
        fault = None
        if rng.random() < settings.fault_probability:
            kind = self.kinds[self.next_kind % len(self.kinds)]
            self.next_kind += 1
            fault = {"entry": entries[count], "kind": kind,
                     "triggers": int(rng.integers(1, FAULT_KERNELS[kind].triggers + 1)),
                     "on_write": bool(rng.random() < 0.5)}
        stream, chunks = self._stream(plans, fault)
        # The decoy is write-triggered, so that all its events are made before it is
        # disarmed: a read's event comes with its response, which may come later.
        decoy = None
        if len(chunks) >= 2 and rng.random() < settings.decoy_probability:
            decoy = entries[count + 1]
            arm_before = int(rng.integers(0, len(chunks) - 1))
            disarm_before = int(rng.integers(arm_before + 1, len(chunks) + 1))
            sectors = int(rng.integers(1, 65))
            first_sector = int(rng.integers(0, (UNRELATED_REGION[1] - UNRELATED_REGION[0]) // SECTOR - sectors))
            decoy_program = EntryProgram(decoy, DECOY_KERNEL.name, {
                "base": UNRELATED_REGION[0] + SECTOR * first_sector, "size": SECTOR * sectors,
                "on_write": True, "on_read": False})
        stage = Stage(number, plans, launch_entries, fault, decoy)

        self._load_image(plans)
        programs = [EntryProgram(index, plan.spec.image.name, plan.entry, tuple(plan.arguments))
                    for index, plan in zip(launch_entries, plans)]
        if fault is not None:
            programs.append(EntryProgram(fault["entry"], FAULT_KERNELS[fault["kind"]].image.name, {
                "base": FAULT_REGION[0], "size": FAULT_REGION[1] - FAULT_REGION[0],
                "on_write": fault["on_write"], "on_read": not fault["on_write"]}))
        launch_mask = sum(1 << index for index in launch_entries)
        stage.arm_key = job.runtime(ArmEntries(tuple(programs), "all", launch_mask))
        in_force = {program.index: _matching(program) for program in programs}

        for chunk, (start, end) in enumerate(chunks):
            if decoy is not None and chunk == arm_before:
                job.runtime(ArmEntries((decoy_program,)))
                in_force[decoy] = _matching(decoy_program)
            if decoy is not None and chunk == disarm_before:
                job.runtime(ArmEntries(disarm=(decoy,)))
                del in_force[decoy]
            job.retime(draw_timing(rng, settings, reordering=job.timing.reorder > 1))
            job.load(requests=stream[start:end])
            last = end == len(stream)
            key = job.run(until=("sent", "answered", "irq") if last else ("sent",))
            stage.phases.append((key, "stream"))
            self.timeline.append((key, dict(in_force)))
        for _ in range(count - 1):
            job.runtime(AcknowledgeCompleted(launch_mask))
            stage.phases.append((job.run(until=("irq",)), "completion"))
        settle = SETTLE_CYCLES + (settings.watchdog if fault and fault["kind"] == "watchdog" else 0)
        stage.phases.append((job.run(until=(), budget=settle), "settle"))
        stage.report_key = job.runtime(StageReport(stage.entries))
        stage.dump_key = job.dump()
        return stage

    def _stream(self, plans, fault):
        """The stage's GPU requests and their chunks (start, end)."""
        rng, settings = self.rng, self.settings
        triggers = sum(len(plan.trigger) for plan in plans)
        faults = 0 if fault is None else fault["triggers"]
        unrelated = triggers * int(rng.integers(0, settings.unrelated + 1))
        labels = np.repeat(np.arange(3), [triggers, faults, unrelated])
        rng.shuffle(labels)
        count = len(labels)
        addr = np.zeros(count, dtype=np.uint64)
        write = np.zeros(count, dtype=bool)
        data = np.zeros((count, SECTOR), dtype=np.uint8)
        mask = np.full(count, FULL_MASK, dtype=np.uint64)

        # The launches' triggering accesses, interleaved at random, each launch's in order.
        owner = rng.permutation(np.repeat(np.arange(len(plans)), [len(plan.trigger) for plan in plans]))
        taken = [0] * len(plans)
        for row, number in zip(np.flatnonzero(labels == 0), owner):
            plan = plans[number]
            offset, byte_mask = plan.trigger[taken[number]]
            taken[number] += 1
            addr[row] = plan.entry["base"] + offset
            if plan.write_triggered:
                write[row] = True
                data[row] = plan.trigger_bytes[offset:offset + SECTOR]
                mask[row] = byte_mask

        rows = np.flatnonzero(labels == 1)
        addr[rows] = _sectors(rng, FAULT_REGION, len(rows))
        write[rows] = bool(fault and fault["on_write"])

        rows = np.flatnonzero(labels == 2)
        addr[rows] = _sectors(rng, UNRELATED_REGION, len(rows))
        errors = rows[rng.random(len(rows)) < settings.error_share]
        failing = errors[rng.random(len(errors)) < 0.5]
        addr[errors] = _sectors(rng, HOLE, len(errors))
        addr[failing] = _sectors(rng, FAILING, len(failing))
        write[rows] = rng.random(len(rows)) < 0.5
        partial = rows[write[rows] & (rng.random(len(rows)) < 0.5)]
        mask[partial] = rng.integers(0, FULL_MASK + 1, len(partial), dtype=np.uint64)

        written = np.flatnonzero(write & (labels != 0))
        data[written] = rng.integers(0, 256, (len(written), SECTOR), dtype=np.uint8)
        ids = rng.integers(0, 1 << CONFIG.id_width, count)
        gaps = rng.integers(0, int(rng.integers(0, settings.max_gap + 1)) + 1, count)
        long = rng.random(count) < 0.01
        gaps[long] = rng.integers(0, settings.long_gap + 1, int(long.sum()))
        stream = RequestStream(CONFIG, addr=addr, write=write, data=data, mask=mask, id=ids, gap=gaps)

        pieces = min(int(rng.integers(1, settings.max_chunks + 1)), count)
        cuts = np.sort(rng.choice(np.arange(1, count), pieces - 1, replace=False)) if pieces > 1 else []
        bounds = [0, *[int(cut) for cut in cuts], count]
        return stream, list(zip(bounds[:-1], bounds[1:]))


def _matching(program):
    """What the trigger matches an access against (base, size, directions)."""
    entry = program.entry
    return FilterRange(entry["base"], entry["size"], on_write=entry["on_write"], on_read=entry["on_read"])


def draw_round(seed, number, settings=SoakSettings()):
    """Round ``number`` of the soak of ``seed``."""
    built = _Round(seed, number, settings)
    return SoakRound(seed, number, settings, built.job, built.stages, built.timeline,
                     built.prepare_key)
