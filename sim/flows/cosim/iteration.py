"""One slice's share of a block of a training iteration, as the host model plans it.

The host model supplies everything: the zoo graph, the offload plan (where each op runs,
its NDP kernel, the tensor whose accesses trigger it, its scheduled time) and the tiering
run (the stall before each op and the pages it migrates). From those this module lays out
the slice's memory and writes the *steps* of a co-simulation, one per op of the block that
does work of its own, in schedule order:

- a GPU op becomes a **GPU stage**: its reads of the slice's share of each input and its
  writes of the share of each output, spread over the op's scheduled time; the on-the-fly
  kernels that ride on one of its outputs are programmed before it, and the GPU's writes of
  that output are their triggering writes;
- a standalone NDP op, and each later phase of an offloaded op (``bn_apply`` after
  ``bn_stats``), becomes a **sweep stage**: the kernel's triggering accesses issued at full
  rate on the GPU port. The engine has no pass of its own that walks a tensor, so the
  sweep stands for it: it moves exactly the trigger tensor's sectors, as the standalone
  kernel's own reads would;
- before each step the tiering model's stall at that boundary is an idle phase, and the
  pages it moves between HBM and flash during the op are page copies through the slice
  (fetches write, evictions read) to a staging region no entry watches.

With ``setup.overlap`` a GPU op and an independent NDP op the host model schedules at the
same time then become one stage (:mod:`~matndp.sim.flows.cosim.overlap`).

Slice ``slice_index`` of the ``slices`` the GPU's memory is interleaved over holds what the
interleave deals it (:mod:`~matndp.sim.flows.cosim.interleave`): whole rows of an activation
with channels innermost (so a per-channel reduction is the slice's partial over its rows),
whole sectors of anything else, each dealt round-robin from slice 0; the sectors of the
pages the tiering model moves during an op are dealt the same way.

Values: the GPU's own outputs and every kernel operand are seeded random (no producer is
modelled in numpy here); each kernel launch has its own copy of its operands, placed at
its own addresses (the trigger tensor that a GPU op writes is the GPU's write data).
"""

from dataclasses import dataclass, field, replace
from math import ceil

import numpy as np

from matndp.host.calibration import load_calibration
from matndp.host.gpu import get_preset
from matndp.host.kernels.library import OPS, LibraryError, kernel as library_kernel
from matndp.host.offload import plan_offload
from matndp.host.tier.config import TierConfig
from matndp.host.tier.events import EventKind
from matndp.host.tier.flash import flash_preset
from matndp.host.tier.run import op_times
from matndp.host.tier.simulate import simulate
from matndp.host.zoo import build_model
from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.flows.kernel_run import Launch, plan_launches
from matndp.sim.flows.cosim.interleave import by_rows, granule_elements, granules, held_count, tensor_itemsize
from matndp.sim.flows.cosim.setup import CosimError


__all__ = ["Stage", "Step", "IterationShare", "share_iteration", "share_block", "share_blocks", "gpu_slices",
           "IterationPlan", "GPU_BASE", "LAUNCH_BASE",
           "STAGING_BASE", "STAGING_SECTORS"]


SECTOR = KERNEL_CONFIG.sector_bytes
GPU_BASE = 0x0100_0000          # the GPU's tensors (shares)
LAUNCH_BASE = 0x0400_0000       # kernel launches' operands
STAGING_BASE = 0x0800_0000      # where page copies between the tiers land
STAGING_SECTORS = 128
GAP_LIMIT = (1 << 16) - 1       # the harness's gap field
MIN_ROWS = 2
# A request's source as fixed-width text ("gpu", "sweep", "migration"): columns of millions
# of requests are concatenated and reordered, which costs per element for Python objects.
SOURCE_DTYPE = "<U9"
# The most memory one share may take (64 MiB): the harness allocates each job's memory when
# it loads the image (no build holds its size), and a worker holds the image, its hex file
# and the dump at once.
MAX_IMAGE_SECTORS = 1 << 21


@dataclass
class Stage:
    """Requests (``addr``, ``write``, ``data``, ``mask`` columns; ``source`` per request:
    ``"gpu"``, ``"sweep"`` or ``"migration"``) offered with ``gap`` idle cycles before
    each, after ``launches`` (:class:`~matndp.sim.flows.kernel_run.LaunchPlan`, launch *i* on
    entry *i*) are programmed; ``idle_after`` cycles of the op's time that the gaps could
    not hold."""
    kind: str                   # "gpu" or "sweep"
    label: str
    launches: list
    addr: np.ndarray
    write: np.ndarray
    data: np.ndarray
    mask: np.ndarray
    source: np.ndarray
    gap: np.ndarray
    idle_after: int = 0

    def __len__(self):
        return len(self.addr)


@dataclass
class Step:
    """An op of the block with work of its own: its stages, the tiering stall before it
    (cycles), the host model's scheduled cycles, and the offloaded ops riding on it."""
    op: str
    where: str
    phase: str
    host_cycles: int
    stall_cycles: int
    stages: list
    riders: list = field(default_factory=list)
    migrated_sectors: dict = field(default_factory=dict)
    concurrent_with: str | None = None      # the GPU op whose merged stage holds this step's first stage


@dataclass
class IterationShare:
    setup: object
    graph: object
    plan: object
    tier: object
    clock_hz: float
    slices: int
    memory_interval: int            # cycles per sector of the slice's DRAM bandwidth
    steps: list
    ops: list                       # every op of the block: name, where, kernel, host cycles
    image: list                     # (addr, bytes) regions
    notes: list
    image_sectors: int = 0          # what the image needs of the harness's memory
    overlap: dict = field(default_factory=dict)     # the host model's serial and overlapped cycles, what merged
    serial_steps: list = field(default_factory=list)    # the merged steps as they were


def block_of(op_name):
    """The block an op belongs to: its name up to the first numbered part (``layer1.0``,
    ``features.3``, ``encoder.layer.5``), else its first part (``conv1``, ``fc``); an
    optimizer step belongs to its parameter's block."""
    name = op_name.removeprefix("optimizer:")
    parts = name.split(".")
    for index, part in enumerate(parts[1:], start=1):
        if part.isdigit():
            return ".".join(parts[:index + 1])
    return parts[0]


def blocks_of(graph):
    """Every block of ``graph``, in the order of their first op."""
    return list(dict.fromkeys(block_of(op.name) for op in graph.ops))


def _block_ops(graph, block):
    ops = [(index, op) for index, op in enumerate(graph.ops) if block_of(op.name) == block]
    if not ops:
        known = blocks_of(graph)
        shown = ", ".join(known[:10]) + (f" ... ({len(known)} in all)" if len(known) > 10 else "")
        raise CosimError(f"no op of {graph.name} starts with {block!r}; blocks: {shown}")
    return ops


def share_elements(tensor, slices, index=0):
    """Elements of ``tensor`` slice ``index`` of ``slices`` holds (the interleave's granules
    it holds, :mod:`~matndp.sim.flows.cosim.interleave`)."""
    held = held_count(granules(tensor), slices, index)
    if by_rows(tensor):
        # At least two rows: a batch-norm's running variance needs n/(n - 1). A slice that
        # holds fewer rows than that is given two (the report notes it).
        held = max(MIN_ROWS, held)
    return held * granule_elements(tensor)


def _short_rows(tensor, slices, index):
    """Whether slice ``index`` holds fewer than :data:`MIN_ROWS` rows of ``tensor``."""
    return by_rows(tensor) and held_count(granules(tensor), slices, index) < MIN_ROWS


def _problem(spec, tensor, slices, index):
    if set(spec.dims) == {"rows", "channels"}:
        channels = tensor.shape[1]
        return {"rows": share_elements(tensor, slices, index) // channels, "channels": channels}
    if set(spec.dims) == {"elements"}:
        return {"elements": share_elements(tensor, slices, index)}
    raise CosimError(f"kernel {spec.name} is sized by {', '.join(spec.dims)}: the co-simulation "
                     f"sizes rows x channels and element-wise kernels only")


def _holds(problem):
    """Whether a kernel's problem on this slice has any work (the slice holds some of its
    trigger)."""
    return all(size > 0 for size in problem.values())


def _merge_order(*counts):
    """The order merging request lists of ``counts`` requests (given one after another) so
    that each spreads evenly over the merged one."""
    keys = [np.arange(count) / max(1, count) + (index * 1e-9) for index, count in enumerate(counts)]
    return np.argsort(np.concatenate(keys), kind="stable") if keys else np.zeros(0, dtype=np.intp)


def _spread(count, cycles):
    """Gaps spreading ``count`` requests over ``cycles``; the cycles the field cannot hold."""
    if count == 0:
        return np.zeros(0, dtype=np.int64), cycles
    edges = np.floor(np.arange(count + 1) * (cycles / count)).astype(np.int64)
    gaps = np.maximum(np.diff(edges) - 1, 0)
    over = np.maximum(gaps - GAP_LIMIT, 0)
    return np.minimum(gaps, GAP_LIMIT), int(over.sum())


def gpu_slices(gpu, calibration=None):
    """The slices GPU preset ``gpu``'s memory is interleaved over: its controllers × the
    calibration's slices per controller."""
    calibration = calibration or load_calibration()
    return get_preset(gpu).memory_controllers * calibration.hardware.slices_per_controller


class IterationPlan:
    """What the host model says of one iteration, shared by the shares of its blocks: the
    graph, the offload plan, the tiering run, the slices and the slice's memory."""

    def __init__(self, setup, graph=None, *, whole=False):
        self.setup = setup
        self.gpu = get_preset(setup.gpu)
        self.calibration = load_calibration()
        hardware = self.calibration.hardware
        self.clock_hz = hardware.clock_hz
        self.slices = setup.slices or gpu_slices(setup.gpu, self.calibration)
        if setup.slice_index >= self.slices:
            raise CosimError(f"slice_index must be below the {self.slices} slices of {setup.gpu}'s "
                             f"memory, not {setup.slice_index}")
        self.graph = graph or build_model(setup.model, batch=setup.batch)
        if not whole:
            _block_ops(self.graph, setup.block)
        self.plan = plan_offload(self.graph, self.gpu, self.calibration)
        try:
            self.tier = simulate(self.graph, op_times(self.graph, self.gpu.name),
                                 TierConfig(hbm_fraction=setup.hbm_fraction), flash_preset(setup.flash),
                                 setup.policy, gpu=self.gpu)
        except ValueError as error:
            raise CosimError(f"tiering {self.graph.name} with {setup.policy} at HBM = "
                             f"{setup.hbm_fraction:g} x footprint: {error}") from None
        per_slice_bps = self.gpu.bandwidth_bps / self.slices
        self.memory_interval = max(1, round(self.clock_hz * SECTOR / per_slice_bps))
        self.schedule = {entry.op: entry for entry in self.plan.schedule}


class _Builder:
    def __init__(self, iteration, block, number=0):
        setup = self.setup = replace(iteration.setup, block=block)
        self.number = number
        self.rng = np.random.default_rng([setup.seed, number])
        for name in ("gpu", "calibration", "clock_hz", "slices", "graph", "plan", "tier",
                     "memory_interval", "schedule"):
            setattr(self, name, getattr(iteration, name))
        self.block_name = block
        self.index = setup.slice_index
        self.block = _block_ops(self.graph, block)
        self.gpu_regions = {}           # tensor -> (addr, nbytes)
        self.gpu_cursor = GPU_BASE
        self.launch_cursor = LAUNCH_BASE
        self.image = []
        self.launch_regions = []
        self.sectors = STAGING_SECTORS
        self.notes = []
        self.staging = 0

    def cycles(self, seconds):
        return int(round(seconds * self.clock_hz))

    def note_rows(self, name):
        tensor = self.graph.tensors[name]
        if _short_rows(tensor, self.slices, self.index):
            rows = granules(tensor)
            note = (f"{name}: {rows} rows over {self.slices} slices; this slice takes "
                    f"{MIN_ROWS} (a batch-norm needs two)")
            if note not in self.notes:
                self.notes.append(note)

    def gpu_region(self, name):
        if name not in self.gpu_regions:
            self.note_rows(name)
            tensor = self.graph.tensors[name]
            nbytes = ceil(share_elements(tensor, self.slices, self.index) * tensor_itemsize(tensor) / SECTOR) * SECTOR
            self.reserve(nbytes)
            addr = self.gpu_cursor
            self.gpu_cursor += nbytes
            self.gpu_regions[name] = (addr, nbytes)
            values = self.rng.integers(0, 256, nbytes, dtype=np.uint8)
            if nbytes:      # a slice the interleave deals none of the tensor has no region of it
                self.image.append((addr, values))
        return self.gpu_regions[name]

    def reserve(self, nbytes):
        """Count ``nbytes`` more of the slice's memory; refuse a share the harness cannot hold
        before its values are made."""
        self.sectors += -(-nbytes // SECTOR)
        if self.sectors > MAX_IMAGE_SECTORS:
            raise CosimError(f"one slice's share of {self.block_name} at batch {self.graph.batch} "
                             f"needs more than {MAX_IMAGE_SECTORS:,} sectors of memory (64 MiB), the "
                             f"most a co-simulation job is given: a smaller batch or more slices")

    def launches(self, requests, seed):
        try:
            plans = plan_launches(requests, seed=seed, base=self.launch_cursor)
        except (LibraryError, ValueError) as error:
            raise CosimError(f"{', '.join(r.name for r in requests)}: {error}") from None
        for plan in plans:
            placed = {name: raw for name, _, raw in plan.place}
            for tensor in plan.launch.tensors:
                size = ceil(plan.launch.allocation(tensor.name) / SECTOR) * SECTOR
                region = np.zeros(size, dtype=np.uint8)
                raw = placed.get(tensor.name)
                if raw is not None:
                    region[:raw.size] = raw
                addr = plan.addresses[tensor.name]
                self.launch_regions.append((addr, region))
                # The launch area is one region, alignment gaps included.
                self.reserve(max(0, addr + size - self.launch_cursor))
                self.launch_cursor = max(self.launch_cursor, addr + size)
        return plans

    def tensor_traffic(self, name, write):
        addr, nbytes = self.gpu_region(name)
        count = nbytes // SECTOR
        addresses = addr + SECTOR * np.arange(count, dtype=np.uint64)
        data = self.rng.integers(0, 256, (count, SECTOR), dtype=np.uint8) if write else \
            np.zeros((count, SECTOR), dtype=np.uint8)
        return _columns(addresses, write, data, np.full(count, (1 << SECTOR) - 1, dtype=np.uint64), "gpu")

    def trigger_traffic(self, plan, source):
        sector = plan.sector_bytes
        write = plan.write_triggered
        # The columns of plan.trigger, made as columns: its millions of tuples are for the
        # per-cycle testbenches.
        offsets, masks = plan.launch.trigger_access_columns()
        if write:
            # Each triggering write carries the trigger tensor's bytes at its offset: the
            # accesses are its whole sectors in order, which the allocation holds.
            data = plan.trigger_bytes[:len(offsets) * sector].reshape(-1, sector)
        else:
            data = np.zeros((len(offsets), sector), dtype=np.uint8)
            masks = np.full(len(offsets), (1 << sector) - 1, dtype=np.uint64)
        return _columns(plan.entry["base"] + offsets, write, data, masks, source)

    def migration_traffic(self, fetch_sectors, evict_sectors):
        rows = []
        for count, write in ((fetch_sectors, True), (evict_sectors, False)):
            if count:
                slot = (self.staging + np.arange(count)) % STAGING_SECTORS
                self.staging += count
                # A fetch's bytes are the tier model's; the copy costs the slot, not the values.
                rows.append(_columns(STAGING_BASE + SECTOR * slot.astype(np.uint64), write,
                                     np.zeros((count, SECTOR), dtype=np.uint8),
                                     np.zeros(count, dtype=np.uint64) if write else
                                     np.full(count, (1 << SECTOR) - 1, dtype=np.uint64), "migration"))
        return rows

    def stage(self, kind, label, launches, groups, cycles):
        """A stage of ``groups`` of request columns: each group spreads evenly over the
        stage, its columns one after another. Each request is written once, where the
        merge puts it."""
        counts = [sum(len(part["addr"]) for part in group) for group in groups]
        total = sum(counts)
        position = np.empty(total, dtype=np.intp)
        position[_merge_order(*counts)] = np.arange(total)
        merged = {key: np.empty((total, *value.shape[1:]), dtype=value.dtype) for key, value in _empty().items()}
        start = 0
        for group in groups:
            for part in group:
                where = position[start:start + len(part["addr"])]
                for key, value in part.items():
                    merged[key][where] = value
                start += len(where)
        gaps, idle = _spread(total, cycles) if kind == "gpu" else (np.zeros(total, dtype=np.int64), 0)
        return Stage(kind, label, launches, merged["addr"], merged["write"], merged["data"],
                     merged["mask"], merged["source"], gaps.astype(np.uint64), idle)

    def tier_by_slot(self):
        """Per op slot of the last iteration: (stall seconds, fetched pages, evicted pages)."""
        run = self.tier
        record = run.records[-1]
        stalls = np.asarray(record.stall_by_boundary, dtype=float)
        fetched = np.zeros(len(stalls), dtype=np.int64)
        evicted = np.zeros(len(stalls), dtype=np.int64)
        slot = None
        for event in run.log or ():
            if event.time_s < record.start_s:
                continue
            if event.kind is EventKind.OP:
                slot = event.slot
            elif slot is not None and event.kind is EventKind.FETCH_BEGIN:
                fetched[slot] += event.pages
            elif slot is not None and event.kind is EventKind.EVICT_BEGIN:
                evicted[slot] += event.dirty
        return stalls, fetched, evicted

    def carry(self, steps, carrier, stall, migration, migrated):
        """Add a rider's tiering ``stall`` and page copies (``migration`` request columns,
        ``migrated`` sector counts) to its ``carrier`` (step number, launches, request
        groups): the stall before the carrier's step, the copies spread over its stage."""
        number, launch_plans, groups = carrier
        groups += [[part] for part in migration]
        step = steps[number]
        stage = self.stage("gpu", step.op, launch_plans, groups, step.host_cycles)
        steps[number] = replace(step, stall_cycles=step.stall_cycles + stall, stages=[stage],
                                migrated_sectors={kind: step.migrated_sectors[kind] + migrated[kind]
                                                  for kind in migrated})

    def build(self):
        graph, plan = self.graph, self.plan
        block = self.block
        names = {op.name for _, op in block}
        producer = {}
        for _, op in block:
            for tensor in op.outputs:
                producer.setdefault(tensor, op)
        stalls, fetched, evicted = self.tier_by_slot()
        page_sectors = self.tier.lifetimes.page_bytes // SECTOR

        # On-the-fly ops whose trigger a GPU op of the block writes ride on that op.
        riding = {}
        for _, op in block:
            placement = plan.placements[op.name]
            if placement.where != "on_the_fly":
                continue
            source = producer.get(placement.trigger)
            if source is not None and plan.placements[source.name].where == "gpu" \
                    and source.name in names and placement.trigger not in \
                    {plan.placements[r].trigger for r in riding.get(source.name, [])}:
                riding.setdefault(source.name, []).append(op.name)

        steps, ops, seed = [], [], self.setup.seed * 1000 + 7919 * self.number
        rode = {rider for riders in riding.values() for rider in riders}
        carriers = {}       # a GPU op -> (its step's number, its launches, its request groups)
        for slot, op in block:
            placement = plan.placements[op.name]
            scheduled = self.schedule[op.name]
            host_cycles = self.cycles(scheduled.end_s - scheduled.start_s)
            phases = OPS[placement.kernel].phases if placement.kernel else ()
            ops.append({"op": op.name, "where": placement.where, "kernel": placement.kernel,
                        "phases": list(phases), "trigger": placement.trigger,
                        "host_cycles": host_cycles,
                        "rides_on": next((p for p, r in riding.items() if op.name in r), None)})
            migrated = {"fetch": held_count(int(fetched[slot]) * page_sectors, self.slices, self.index),
                        "evict": held_count(int(evicted[slot]) * page_sectors, self.slices, self.index)}
            migration = self.migration_traffic(migrated["fetch"], migrated["evict"])
            stall = self.cycles(stalls[slot])
            stages = []
            if placement.where == "gpu":
                launches, held = [], []
                for rider in riding.get(op.name, []):
                    rider_placement = plan.placements[rider]
                    first = OPS[rider_placement.kernel].phases[0]
                    spec = library_kernel(first)
                    self.note_rows(rider_placement.trigger)
                    problem = _problem(spec, graph.tensors[rider_placement.trigger], self.slices, self.index)
                    if _holds(problem):
                        launches.append(Launch(first, problem))
                        held.append(rider)
                seed += 1
                launch_plans = self.launches(launches, seed) if launches else []
                bound = {plan.placements[rider].trigger: launch_plan
                         for rider, launch_plan in zip(held, launch_plans)}
                reads = [self.tensor_traffic(name, False) for name in dict.fromkeys(op.inputs)]
                writes = [self.trigger_traffic(bound[name], "gpu") if name in bound
                          else self.tensor_traffic(name, True) for name in dict.fromkeys(op.outputs)]
                groups = [reads, writes, *[[part] for part in migration]]
                groups = [group for group in groups if any(len(part["addr"]) for part in group)]
                stages.append(self.stage("gpu", op.name, launch_plans, groups, host_cycles))
                carriers[op.name] = (len(steps), launch_plans, groups)
            else:
                sweep_phases = phases[1:] if op.name in rode else phases
                if not sweep_phases and ops[-1]["rides_on"] in carriers:
                    # Every phase rode on the carrier's writes, so the op ran during the
                    # carrier: its tiering stall and page copies go with the carrier's step.
                    if stall or migration:
                        self.carry(steps, carriers[ops[-1]["rides_on"]], stall, migration, migrated)
                    continue
                trigger = graph.tensors[placement.trigger]
                self.note_rows(placement.trigger)
                for index, name in enumerate(sweep_phases):
                    spec = library_kernel(name)
                    seed += 1
                    problem = _problem(spec, trigger, self.slices, self.index)
                    if not _holds(problem):
                        # The interleave dealt this slice none of the trigger: no kernel here.
                        break
                    (launch_plan,) = self.launches([Launch(name, problem)], seed)
                    groups = [[self.trigger_traffic(launch_plan, "sweep")]]
                    if index == 0:
                        groups += [[part] for part in migration]
                    stages.append(self.stage("sweep", f"{op.name}: {name}", [launch_plan], groups, 0))
                if not stages and migration:
                    # No sweep of its own here (the slice holds none of the trigger): the
                    # op's page copies still move.
                    stages.append(self.stage("sweep", f"{op.name}: page copies", [],
                                             [[part] for part in migration], 0))
                if not stages:
                    continue
            steps.append(Step(op.name, placement.where, op.phase, host_cycles, stall, stages,
                              riding.get(op.name, []), migrated))
        overlap = self.overlap(steps)
        merged, serial = overlap.pop("steps"), overlap.pop("serial")
        if self.setup.overlap:
            steps = merged
        else:
            serial, overlap["merged"] = [], []
        # One region per area: the harness's region map is short.
        launch_area = np.zeros(self.launch_cursor - LAUNCH_BASE, dtype=np.uint8)
        for addr, region in self.launch_regions:
            launch_area[addr - LAUNCH_BASE:addr - LAUNCH_BASE + region.size] = region
        if launch_area.size:
            self.image.append((LAUNCH_BASE, launch_area))
        self.image.append((STAGING_BASE, np.zeros(STAGING_SECTORS * SECTOR, dtype=np.uint8)))
        return IterationShare(self.setup, graph, plan, self.tier, self.clock_hz, self.slices,
                              self.memory_interval, steps, ops, self.image, self.notes, self.sectors,
                              overlap, serial)

    def overlap(self, steps):
        """The steps the host model runs at the same time merged (:mod:`~matndp.sim.flows.cosim.overlap`),
        what merged, and the host model's serial and overlapped cycles of the block."""
        from matndp.sim.flows.cosim.overlap import overlap_steps, planned_overlap
        merged, groups, serial = overlap_steps(steps, self.graph, self.plan, self.schedule,
                                               interval=self.memory_interval, gap_limit=GAP_LIMIT)
        return {"steps": merged, "serial": serial,
                **planned_overlap(steps, self.plan, self.schedule, self.clock_hz),
                "merged": [{"gpu": steps[group.gpu].op, "ndp": [steps[n].op for n in group.ndp],
                            "planned_overlap_cycles": [self.cycles(s) for s in group.planned_s]}
                           for group in groups]}


def _columns(addr, write, data, mask, source):
    count = len(addr)
    return {"addr": np.asarray(addr, dtype=np.uint64), "write": np.full(count, bool(write)),
            "data": data, "mask": np.asarray(mask, dtype=np.uint64),
            "source": np.full(count, source, dtype=SOURCE_DTYPE)}


def _empty():
    return _columns(np.zeros(0, dtype=np.uint64), False, np.zeros((0, SECTOR), dtype=np.uint8),
                    np.zeros(0, dtype=np.uint64), "gpu")


def share_iteration(setup, graph=None):
    """The :class:`IterationShare` of ``setup`` (a :class:`~matndp.sim.flows.cosim.setup.CosimSetup`); ``graph``
    (an :class:`~matndp.host.graph.IterationGraph`) stands for the zoo model when given."""
    return _Builder(IterationPlan(setup, graph), setup.block).build()


def share_block(iteration, block, number):
    """The :class:`IterationShare` of ``block``, block ``number`` of ``iteration`` (an
    :class:`IterationPlan`): the same whether the blocks before it were planned or not."""
    return _Builder(iteration, block, number).build()


def share_blocks(setup, graph=None):
    """The :class:`IterationShare` of every block of the iteration, in order (the whole
    iteration, each block a share of its own: the harness's memory holds one at a time)."""
    iteration = IterationPlan(setup, graph, whole=True)
    return [share_block(iteration, block, number) for number, block in enumerate(blocks_of(iteration.graph))]
