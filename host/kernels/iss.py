"""The instruction-set simulator: kernels of :mod:`matndp.hw.engine.isa` run functionally on
numpy state, as the reference the RTL engine must match bit for bit.

Model (docs/isa.md, "Execution model"). Each filter entry (:class:`FilterEntry`) names a
kernel image, an argument block and the number of µthreads it expects. When the simulator
first runs, every entry is armed in index order and its ``.init`` runs, as the entry's
``init_threads`` µthreads with SEQ 0, 1, … (independent of each other, like a finalizer's).
Then each trigger
event (:class:`TriggerEvents`, in trigger order) starts one ``.main`` µthread of its entry
(of an entry that gathers arrivals, only each sector's K-th write does);
a GPU write's bytes reach memory before that µthread starts. The result is defined as
running the µthreads one after the other in trigger order, each to completion; an entry's
``.final`` runs once its completed µthreads reach the expected count, as the entry's
``final_threads`` µthreads with SEQ 0, 1, … (independent of each other: each writes its
own results). A µthread that faults
(:class:`~matndp.hw.engine.isa.ErrorCause`) stops its entry: later triggers of the entry
are drained (counted, not run) and its finalizer does not run; other entries go on.

Speed: µthreads are run in batches, all µthreads at one pc executing an instruction
together (the lowest pc first, so branches that diverge meet again). For kernels whose
µthreads do not communicate through memory this gives exactly the trigger-order result;
µthreads that do are reported as races (:mod:`matndp.host.kernels.races`), since the
hardware does not order them either. Scratchpad atomics, which the hardware does order
(by trigger), are applied in trigger order; when the grouped order would differ (two
atomics of one µthread on one sector, divergent paths to atomics) the batch is undone and
run one µthread at a time. A fault undoes the batch too and runs it again without the
entry's later µthreads.
"""

from dataclasses import dataclass, field

import numpy as np

from matndp.hw.config import NDPConfig
from matndp.hw.engine.isa import (ARGUMENT_WORDS, NO_TRIGGER_SPECIALS, ErrorCause,
                                  IllegalInstruction, Instruction, Opcode, ScalarSpecial)
from matndp.host.kernels.image import KernelImage, Section
from matndp.host.kernels.memory import Memory
from matndp.host.kernels.races import AccessTracker, UndoLog
from matndp.host.kernels.semantics import EXECUTE, OrderViolation, Threads


__all__ = ["IssConfig", "FilterEntry", "TriggerEvent", "TriggerEvents", "KernelFault",
           "EntryStatus", "RunResult", "RaceError", "InstructionSetSimulator"]


_MASK64 = (1 << 64) - 1
# The default slice: the simulated engine's parameters unless a caller gives others.
_SLICE = NDPConfig()


@dataclass(frozen=True)
class IssConfig:
    """Parameters of the simulated engine.

    sector_bytes, addr_width: as the slice's (``NDPConfig``; see :meth:`from_ndp`).
    scratchpad_bytes: scratchpad size.
    watchdog:         instructions a µthread may execute; one more faults it.
    slots:            µthread slots (only what SLOT reads depends on it).
    The defaults are the default slice's (``NDPConfig()`` and its engine).
    window:           (base, size) of the memory the engine may access; ``None``: the
                      whole memory image.
    batch:            µthreads run together (speed only; results do not depend on it).
    """
    sector_bytes: int = _SLICE.sector_bytes
    addr_width: int = _SLICE.addr_width
    scratchpad_bytes: int = _SLICE.engine.scratchpad_bytes
    watchdog: int = 4096
    slots: int = _SLICE.engine.slots
    window: tuple = None
    batch: int = 16384

    def __post_init__(self):
        for name in ("sector_bytes", "addr_width", "scratchpad_bytes", "watchdog", "slots", "batch"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"IssConfig.{name} must be a positive int, not {value!r}")
        if self.sector_bytes < 4 or self.sector_bytes & (self.sector_bytes - 1):
            raise ValueError(f"IssConfig.sector_bytes must be a power of two of at least 4, "
                             f"not {self.sector_bytes}")
        if self.scratchpad_bytes % self.sector_bytes:
            raise ValueError(f"IssConfig.scratchpad_bytes ({self.scratchpad_bytes}) must be a "
                             f"multiple of the sector ({self.sector_bytes})")
        if not 1 <= self.addr_width <= 64:
            raise ValueError(f"IssConfig.addr_width must be in 1 … 64, not {self.addr_width}")
        if self.window is not None and (len(self.window) != 2 or min(self.window) < 0):
            raise ValueError(f"IssConfig.window must be (base, size), not {self.window!r}")

    @property
    def lanes(self):
        return self.sector_bytes // 4

    @classmethod
    def from_ndp(cls, config: NDPConfig, **engine):
        return cls(sector_bytes=config.sector_bytes, addr_width=config.addr_width, **engine)


@dataclass(frozen=True)
class FilterEntry:
    """A programmed filter entry: the range it watches, its kernel, its argument block
    (up to ARGUMENT_WORDS integers, each a 64-bit word), its expected µthread count
    (0: the finalizer never runs), the µthreads its initializer and its finalizer run as
    (0 runs one), and its arrival gathering (a :class:`~matndp.host.runtime.Gathering`:
    only each sector's K-th write starts a µthread, as the trigger's gathering table
    decides; None: every event does)."""
    base: int
    size: int
    kernel: KernelImage
    arguments: tuple = ()
    expected: int = 0
    final_threads: int = 1
    init_threads: int = 1
    gather: object = None

    def __post_init__(self):
        if len(self.arguments) > ARGUMENT_WORDS:
            raise ValueError(f"an argument block has {ARGUMENT_WORDS} words, not {len(self.arguments)}")
        for index, word in enumerate(self.arguments):
            if not isinstance(word, (int, np.integer)) or not -(1 << 63) <= int(word) <= _MASK64:
                raise ValueError(f"argument word {index} = {word!r} is not a 64-bit integer")
        if self.size <= 0 or self.base < 0:
            raise ValueError(f"filter range base {self.base:#x} size {self.size:#x} is empty")
        if self.expected < 0:
            raise ValueError(f"expected count {self.expected} is negative")
        for name in ("init_threads", "final_threads"):
            count = getattr(self, name)
            if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
                raise ValueError(f"{name} must be a count of µthreads, not {count!r}")
        if Section.MAIN not in self.kernel.sections:
            raise ValueError(f"kernel {self.kernel.name!r} has no main section")
        if self.gather is not None and self.size > self.gather.ports << self.gather.copy_log2:
            raise ValueError(f"filter range of {self.size:#x} bytes beyond its {self.gather.ports} "
                             f"gathered copies of {1 << self.gather.copy_log2:#x}")


@dataclass(frozen=True)
class TriggerEvent:
    entry: int
    addr: int
    data: bytes
    mask: int = None          # byte enables, bit i for byte i; None: every byte
    write: bool = True


@dataclass
class TriggerEvents:
    """Trigger events in trigger order, as arrays: ``entry`` (n,), ``addr`` (n,),
    ``data`` (n, sector_bytes) uint8, ``mask`` (n, sector_bytes) bool, ``write`` (n,)."""
    entry: np.ndarray
    addr: np.ndarray
    data: np.ndarray
    mask: np.ndarray
    write: np.ndarray

    def __post_init__(self):
        self.entry = np.asarray(self.entry, dtype=np.int64).reshape(-1)
        self.addr = np.asarray(self.addr, dtype=np.uint64).reshape(-1)
        self.data = np.ascontiguousarray(self.data, dtype=np.uint8)
        self.mask = np.asarray(self.mask, dtype=bool)
        self.write = np.asarray(self.write, dtype=bool).reshape(-1)
        n = len(self.entry)
        if self.data.ndim != 2 or self.data.shape[0] != n or self.mask.shape != self.data.shape \
                or len(self.addr) != n or len(self.write) != n:
            raise ValueError("trigger event arrays disagree in length or sector size")

    def __len__(self):
        return len(self.entry)

    @property
    def sector_bytes(self):
        return self.data.shape[1]

    @classmethod
    def of(cls, events, sector_bytes=_SLICE.sector_bytes):
        events = list(events)
        data = np.zeros((len(events), sector_bytes), dtype=np.uint8)
        mask = np.ones((len(events), sector_bytes), dtype=bool)
        for i, event in enumerate(events):
            raw = np.frombuffer(bytes(event.data), dtype=np.uint8)
            if raw.size != sector_bytes:
                raise ValueError(f"event {i}: {raw.size} data bytes, not a {sector_bytes}-byte sector")
            data[i] = raw
            if event.mask is not None:
                mask[i] = [(event.mask >> b) & 1 for b in range(sector_bytes)]
        return cls([e.entry for e in events], [e.addr for e in events], data, mask,
                   [e.write for e in events])

    @classmethod
    def sectors(cls, entry, address, values, write=True, sector_bytes=_SLICE.sector_bytes, order=None):
        """One full-sector event per sector of ``values``' bytes at ``address`` (a GPU
        writing, or reading, a whole tensor), in ``order`` (sector indices) if given."""
        raw = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
        if raw.size % sector_bytes or address % sector_bytes:
            raise ValueError(f"{raw.size} bytes at {address:#x} are not whole {sector_bytes}-byte sectors")
        data = raw.reshape(-1, sector_bytes)
        index = np.arange(len(data)) if order is None else np.asarray(order)
        n = len(index)
        return cls(np.full(n, entry), address + index.astype(np.uint64) * np.uint64(sector_bytes),
                   data[index], np.ones((n, sector_bytes), dtype=bool), np.full(n, write))

    @classmethod
    def concatenate(cls, parts):
        parts = list(parts)
        return cls(*(np.concatenate([getattr(p, name) for p in parts])
                     for name in ("entry", "addr", "data", "mask", "write")))

    def take(self, index):
        return TriggerEvents(self.entry[index], self.addr[index], self.data[index],
                             self.mask[index], self.write[index])


@dataclass(frozen=True)
class KernelFault:
    """The error that stopped an entry: where (section, pc within the kernel image), why,
    and which µthread (its SEQ; ``None`` for an initializer or finalizer)."""
    entry: int
    section: Section
    pc: int
    cause: ErrorCause
    seq: object
    detail: str

    def __str__(self):
        who = f"µthread {self.seq}" if self.seq is not None else f"the .{self.section.value} µthread"
        return (f"entry {self.entry}: {self.cause.name} at pc {self.pc} (.{self.section.value}, "
                f"{who}): {self.detail}")


@dataclass
class EntryStatus:
    triggers: int = 0
    completed: int = 0
    drained: int = 0
    initialized: bool = False
    finalized: bool = False
    error: KernelFault = None


@dataclass
class RunResult:
    """What a run did: per entry status, instructions executed, races (the first few;
    ``race_count`` counts all), and how many batches ran one µthread at a time."""
    entries: dict
    instructions: int = 0
    races: list = field(default_factory=list)
    race_count: int = 0
    sequential_batches: int = 0

    @property
    def errors(self):
        return [status.error for status in self.entries.values() if status.error is not None]


class RaceError(RuntimeError):
    """A run had races (accesses the hardware does not order); ``result`` has the rest."""

    def __init__(self, result, describe):
        lines = [describe(race) for race in result.races]
        more = result.race_count - len(result.races)
        super().__init__(f"{result.race_count} unordered access pair(s): " + "; ".join(lines)
                         + (f"; and {more} more" if more > 0 else ""))
        self.result = result


class _Rerun(Exception):
    def __init__(self, limits):
        self.limits = limits


class InstructionSetSimulator:
    """Runs the kernels of ``entries`` ({index: FilterEntry}, or a sequence indexed from 0)
    against ``memory`` (:class:`Memory`)."""

    def __init__(self, memory, entries, config=IssConfig()):
        if not isinstance(memory, Memory):
            raise TypeError(f"memory must be a Memory, not {type(memory).__name__}")
        if memory.sector_bytes != config.sector_bytes:
            raise ValueError(f"memory sectors are {memory.sector_bytes} bytes, the engine's "
                             f"{config.sector_bytes}")
        self.config, self.memory = config, memory
        self.entries = dict(entries) if isinstance(entries, dict) else dict(enumerate(entries))
        for index, entry in self.entries.items():
            if not isinstance(entry, FilterEntry):
                raise TypeError(f"entry {index} must be a FilterEntry, not {type(entry).__name__}")
        self.lanes, self.sector_bytes, self.addr_width = config.lanes, config.sector_bytes, config.addr_width
        base, size = config.window if config.window is not None else (memory.base, memory.size)
        if not memory.contains(base, size):
            raise ValueError(f"the window [{base:#x}, {base + size:#x}) is not inside the memory "
                             f"image [{memory.base:#x}, {memory.end:#x})")
        self.window = (base, base + size)
        sectors = memory.size // self.sector_bytes
        self.memory_sectors = memory.data.view("<u4").reshape(sectors, self.lanes)
        self.memory_bytes = memory.data.reshape(sectors, self.sector_bytes)
        self.memory_words = memory.data.view("<u4")
        self.scratchpad = np.zeros(config.scratchpad_bytes, dtype=np.uint8)
        scratch_sectors = config.scratchpad_bytes // self.sector_bytes
        self.scratchpad_sectors = self.scratchpad.view("<u4").reshape(scratch_sectors, self.lanes)
        self.scratchpad_words = self.scratchpad.view("<u4")
        self.undo = UndoLog()
        self._trackers = {
            False: AccessTracker("memory", sectors, self.sector_bytes, memory.base, self.undo),
            True: AccessTracker("scratchpad", scratch_sectors, self.sector_bytes, 0, self.undo),
        }
        self.atomic_last = np.full(scratch_sectors, -1, dtype=np.int64)
        self._load_code()
        self._tables()
        self.status = {index: EntryStatus() for index in self.entries}
        self._armed = False
        self._triggers = 0
        self._trigger_entry, self._trigger_seq = [], []
        self._gather_counts = {}
        self.instructions = 0
        self.sequential_batches = 0

    # Code -------------------------------------------------------------------------------

    def _load_code(self):
        """All distinct kernel images, decoded, one after the other in one code space."""
        self.code, self._image_base = [], {}
        self._decode_errors = {}
        for entry in self.entries.values():
            image = entry.kernel
            if id(image) in self._image_base:
                continue
            self._image_base[id(image)] = len(self.code)
            for word in image.words:
                try:
                    self.code.append(Instruction.decode(word))
                except IllegalInstruction as error:
                    self._decode_errors[len(self.code)] = str(error)
                    self.code.append(None)

    def _tables(self):
        """Per entry index: range base, kernel bounds in the code space, section starts
        and argument block, so that µthreads are set up without per-µthread Python."""
        size = max(self.entries) + 1
        self._entry_base = np.zeros(size, dtype=np.uint64)
        self._entry_lo = np.zeros(size, dtype=np.int64)
        self._entry_hi = np.zeros(size, dtype=np.int64)
        self._entry_main = np.zeros(size, dtype=np.int64)
        self._entry_args = np.zeros((size, ARGUMENT_WORDS), dtype=np.uint64)
        for index, entry in self.entries.items():
            lo = self._image_base[id(entry.kernel)]
            self._entry_base[index] = entry.base
            self._entry_lo[index], self._entry_hi[index] = lo, lo + len(entry.kernel.words)
            self._entry_main[index] = lo + entry.kernel.sections[Section.MAIN]
            self._entry_args[index, :len(entry.arguments)] = [int(w) & _MASK64 for w in entry.arguments]

    def tracker(self, scratchpad):
        return self._trackers[scratchpad]

    def image_pc(self, threads, selected):
        first = selected[0] if len(selected) else 0
        return int(threads.pc[first] - threads.lo[first])

    # Running ----------------------------------------------------------------------------

    def run(self, events, allow_races=False):
        """Run the µthreads of ``events`` (:class:`TriggerEvents`); returns a
        :class:`RunResult`, or raises :class:`RaceError` when there were races and
        ``allow_races`` is false. Memory and scratchpad keep the results."""
        self._validate(events)
        marks = {scratch: tracker.mark() for scratch, tracker in self._trackers.items()}
        instructions, sequential = self.instructions, self.sequential_batches
        if not self._armed:
            self._armed = True
            for index in sorted(self.entries):
                self._initialize(index)
        spawns = self._gathered(events)
        seqs = np.full(len(events), -1, dtype=np.int64)
        for index in self.entries:
            chosen = np.flatnonzero((events.entry == index) & spawns)
            seqs[chosen] = self.status[index].triggers + np.arange(len(chosen))
            self.status[index].triggers += len(chosen)
        ids = self._triggers + np.arange(len(events), dtype=np.int64)
        self._triggers += len(events)
        self._trigger_entry.append(events.entry.copy())
        self._trigger_seq.append(seqs)
        for start in range(0, len(events), self.config.batch):
            chosen = slice(start, start + self.config.batch)
            self._run_batch(events.take(chosen), ids[chosen], seqs[chosen], spawns[chosen])
        races, count = [], 0
        for scratch, tracker in self._trackers.items():
            races += tracker.races[marks[scratch][0]:]
            count += tracker.count - marks[scratch][1]
        result = RunResult({index: EntryStatus(**vars(status)) for index, status in self.status.items()},
                           self.instructions - instructions, races, count,
                           self.sequential_batches - sequential)
        if count and not allow_races:
            raise RaceError(result, self.describe_race)
        return result

    def describe_race(self, race):
        entries = np.concatenate(self._trigger_entry) if self._trigger_entry else np.zeros(0, int)
        seqs = np.concatenate(self._trigger_seq) if self._trigger_seq else np.zeros(0, int)

        def who(trigger):
            return f"entry {entries[trigger]} µthread {seqs[trigger]}"
        where = f" (pc {race.pc})" if race.pc is not None else ""
        first, second = race.kind.split("/") if "/" in race.kind else (race.kind, race.kind)
        return (f"{race.space} sector {race.address:#x}: {first} by {who(race.first)}, "
                f"{second} by {who(race.second)}{where}")

    def _validate(self, events):
        if not isinstance(events, TriggerEvents):
            raise TypeError(f"events must be TriggerEvents, not {type(events).__name__}")
        if len(events) and events.sector_bytes != self.sector_bytes:
            raise ValueError(f"events carry {events.sector_bytes}-byte sectors, the engine "
                             f"{self.sector_bytes}")
        unknown = sorted(set(np.unique(events.entry).tolist()) - set(self.entries))
        if unknown:
            raise ValueError(f"events for entries {unknown}, which are not programmed")
        for index, entry in self.entries.items():
            chosen = events.entry == index
            addr = events.addr[chosen]
            outside = (addr < np.uint64(entry.base)) | (addr >= np.uint64(entry.base + entry.size))
            if outside.any():
                raise ValueError(f"event at {int(addr[outside][0]):#x} is outside entry {index}'s "
                                 f"range [{entry.base:#x}, {entry.base + entry.size:#x})")
        if (events.addr % np.uint64(self.sector_bytes)).any():
            raise ValueError("trigger event addresses must be sector-aligned")
        writes = events.addr[events.write]
        if len(writes) and (writes.min() < np.uint64(self.memory.base)
                            or writes.max() > np.uint64(self.memory.end - self.sector_bytes)):
            raise ValueError("a triggering GPU write lies outside the memory image")

    def _apply_gpu_writes(self, events, ids):
        chosen = np.flatnonzero(events.write)
        if not chosen.size:
            return
        sectors = ((events.addr[chosen] - np.uint64(self.memory.base)) // np.uint64(self.sector_bytes)).astype(np.int64)
        self._trackers[False].gpu_write(sectors, ids[chosen])
        # Repeated sectors are written in trigger order.
        order = np.argsort(sectors, kind="stable")
        keys = sectors[order]
        last = np.r_[keys[1:] != keys[:-1], True]
        if last.all():
            old = self.memory_bytes[sectors]
            self.memory_bytes[sectors] = np.where(events.mask[chosen], events.data[chosen], old)
        else:
            for i in chosen:
                sector = int((events.addr[i] - np.uint64(self.memory.base)) // np.uint64(self.sector_bytes))
                self.memory_bytes[sector] = np.where(events.mask[i], events.data[i], self.memory_bytes[sector])

    def _gathered(self, events):
        """Which events start a µthread: all but those a gathering entry counts without
        starting one (each sector's writes before its K-th, counted per sector of a copy
        across runs)."""
        spawns = np.ones(len(events), dtype=bool)
        for index, entry in self.entries.items():
            if entry.gather is None:
                continue
            ports, copy_log2 = entry.gather.ports, entry.gather.copy_log2
            for position in np.flatnonzero(events.entry == index).tolist():
                offset = int(events.addr[position]) - entry.base
                sector = (offset & ((1 << copy_log2) - 1)) // self.sector_bytes
                count = self._gather_counts.get((index, sector), 0) + 1
                spawns[position] = count == ports
                self._gather_counts[(index, sector)] = 0 if count == ports else count
        return spawns

    def _run_batch(self, events, ids, seqs, spawns):
        self._apply_gpu_writes(events, ids)
        healthy = np.zeros(len(self._entry_base), dtype=bool)
        healthy[[index for index, status in self.status.items() if status.error is None]] = True
        ran = healthy[events.entry] & spawns
        limits = {}
        while True:
            keep = ran.copy()
            for entry, limit in limits.items():
                keep &= ~((events.entry == entry) & (seqs > limit))
            chosen = np.flatnonzero(keep)
            marks = {scratch: tracker.mark() for scratch, tracker in self._trackers.items()}
            try:
                threads = self._main_threads(events, ids, seqs, chosen)
                self._execute(threads)
                self._check_faults(threads, events.entry[chosen], seqs[chosen])
                self.undo.clear()
                self._finish_main(threads, events.entry[chosen], seqs[chosen])
                ran = keep
                break
            except _Rerun as rerun:
                self._rollback(marks)
                limits.update(rerun.limits)
            except OrderViolation:
                self._rollback(marks)
                self.sequential_batches += 1
                ran = keep
                for position in chosen:
                    if self.status[int(events.entry[position])].error is not None:
                        ran[position] = False
                        continue
                    one = np.array([position])
                    threads = self._main_threads(events, ids, seqs, one)
                    self._execute(threads)
                    self.undo.clear()
                    self._finish_main(threads, events.entry[one], seqs[one])
                break
        for entry in limits:
            if self.status[entry].error is None:
                raise RuntimeError(f"entry {entry}: a µthread that faulted did not fault when run "
                                   f"again: the kernel's µthreads race with each other")
        drained = np.bincount(events.entry[spawns & ~ran], minlength=len(self._entry_base))
        for entry in np.flatnonzero(drained).tolist():
            self.status[entry].drained += int(drained[entry])
        for index in sorted(self.entries):
            self._maybe_finalize(index)

    def _rollback(self, marks):
        self.undo.rollback()
        for scratch, tracker in self._trackers.items():
            tracker.reset_to(marks[scratch])

    def _check_faults(self, threads, entries, seqs):
        """A faulting µthread's entry must not have run later µthreads: if it did, the
        batch is run again up to the earliest faulting µthread of each such entry."""
        limits = {}
        for index, _, _, _ in threads.faults:
            entry, seq = int(entries[index]), int(seqs[index])
            if ((entries == entry) & (seqs > seq)).any():
                limits[entry] = min(seq, limits.get(entry, seq))
        if limits:
            raise _Rerun(limits)

    def _finish_main(self, threads, entries, seqs):
        for index, cause, pc, detail in threads.faults:
            entry = int(entries[index])
            status = self.status[entry]
            if status.error is None:
                image_pc = int(pc - threads.lo[index])
                status.error = KernelFault(entry, self._section(entry, image_pc), image_pc, cause,
                                           int(seqs[index]), detail)
        done = np.bincount(entries[threads.finished], minlength=len(self._entry_base))
        for entry in np.flatnonzero(done).tolist():
            self.status[entry].completed += int(done[entry])
        self.instructions += int(threads.executed.sum())

    def _section(self, entry, pc):
        image = self.entries[entry].kernel
        try:
            return image.section_of(int(pc))
        except IndexError:
            return Section.MAIN

    # µthreads ---------------------------------------------------------------------------

    def _main_threads(self, events, ids, seqs, chosen):
        entries = events.entry[chosen]
        mask = events.mask[chosen]
        mask_bits = np.packbits(mask, axis=1, bitorder="little")
        mask_low = np.zeros((len(chosen), 8), dtype=np.uint8)
        width = min(8, mask_bits.shape[1])
        mask_low[:, :width] = mask_bits[:, :width]
        addr = events.addr[chosen]
        specials = {
            ScalarSpecial.OFFSET: addr - self._entry_base[entries],
            ScalarSpecial.ADDR: addr,
            ScalarSpecial.ENTRY: entries.astype(np.uint64),
            ScalarSpecial.SEQ: seqs[chosen].astype(np.uint64),
            ScalarSpecial.MASK: mask_low.view("<u8").reshape(-1),
            ScalarSpecial.WRITE: events.write[chosen].astype(np.uint64),
            ScalarSpecial.SLOT: (ids[chosen] % self.config.slots).astype(np.uint64),
            # µthreads complete in trigger order here; on the RTL this depends on timing.
            ScalarSpecial.COMPLETED: seqs[chosen].astype(np.uint64),
        }
        data = np.ascontiguousarray(events.data[chosen]).view("<u4").reshape(len(chosen), self.lanes)
        return Threads(self, ids=ids[chosen], entries=entries, starts=self._entry_main[entries],
                       lo=self._entry_lo[entries], hi=self._entry_hi[entries],
                       args=np.ascontiguousarray(self._entry_args[entries].T), main=True,
                       specials=specials, data=data, mask_bytes=mask)

    def _helper_threads(self, index, section, count=1):
        """``count`` µthreads of an initializer or finalizer, SEQ 0 … count − 1."""
        entries = np.full(count, index, dtype=np.int64)
        lo, hi = self._entry_lo[entries], self._entry_hi[entries]
        zero = np.zeros(count, dtype=np.uint64)
        specials = {special: zero for special in ScalarSpecial if special in NO_TRIGGER_SPECIALS}
        specials[ScalarSpecial.SEQ] = np.arange(count, dtype=np.uint64)
        specials[ScalarSpecial.ENTRY] = entries.astype(np.uint64)
        specials[ScalarSpecial.SLOT] = zero
        specials[ScalarSpecial.COMPLETED] = np.full(count, self.status[index].completed, dtype=np.uint64)
        return Threads(self, ids=np.full(count, -1), entries=entries,
                       starts=lo + self.entries[index].kernel.sections[section], lo=lo, hi=hi,
                       args=np.ascontiguousarray(self._entry_args[entries].T), main=False, specials=specials,
                       data=np.zeros((count, self.lanes), dtype=np.uint32),
                       mask_bytes=np.zeros((count, self.sector_bytes), dtype=bool))

    def _run_helper(self, index, section, count=1):
        threads = self._helper_threads(index, section, count)
        self._execute(threads)
        self.undo.clear()
        self.instructions += int(threads.executed.sum())
        status = self.status[index]
        for _, cause, pc, detail in threads.faults[:1]:
            image_pc = int(pc - threads.lo[0])
            status.error = KernelFault(index, section, image_pc, cause, None, detail)
        return not threads.faults

    def _initialize(self, index):
        if Section.INIT in self.entries[index].kernel.sections:
            self._run_helper(index, Section.INIT, max(1, int(self.entries[index].init_threads)))
        self.status[index].initialized = True

    def _maybe_finalize(self, index):
        entry, status = self.entries[index], self.status[index]
        if status.finalized or entry.expected == 0 or status.completed < entry.expected:
            return
        if status.error is not None and status.error.seq is None:
            return          # the initializer failed
        status.finalized = True
        if Section.FINAL in entry.kernel.sections:
            self._run_helper(index, Section.FINAL, max(1, int(entry.final_threads)))

    def _execute(self, threads):
        """Run ``threads`` until each has exited or faulted, the lowest pc first."""
        watchdog = self.config.watchdog
        code = self.code
        while True:
            active = np.flatnonzero(threads.active)
            if not active.size:
                return
            pcs = threads.pc[active]
            pc = int(pcs.min())
            selected = active[pcs == pc]
            outside = (pc < threads.lo[selected]) | (pc >= threads.hi[selected])
            if outside.any():
                threads.fault(selected[outside], ErrorCause.ILLEGAL_INSTRUCTION, "pc outside the kernel")
                selected = selected[~outside]
                if not selected.size:
                    continue
            instruction = code[pc]
            if instruction is None:
                threads.fault(selected, ErrorCause.ILLEGAL_INSTRUCTION, self._decode_errors[pc])
                continue
            tired = threads.executed[selected] >= watchdog
            if tired.any():
                threads.fault(selected[tired], ErrorCause.WATCHDOG,
                              f"more than {watchdog} instructions")
                selected = selected[~tired]
                if not selected.size:
                    continue
            threads.executed[selected] += 1
            taken = EXECUTE[instruction.opcode](threads, instruction, selected)
            going = selected[threads.active[selected]]
            if taken is not None:
                threads.pc[going] = pc + np.where(taken, instruction.signed_imm, 1)
            elif instruction.exit or instruction.opcode is Opcode.EXIT:
                threads.active[going] = False
                threads.finished[going] = True
            else:
                threads.pc[going] = pc + 1
