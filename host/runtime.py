"""The NDP runtime: programs an NDP slice's filter entries over a CSR bus, reads its
counters, and reads and writes its windows (kernels, argument blocks, the scratchpad). The
same code drives the RTL in co-simulation and would drive hardware.
"""

from dataclasses import dataclass
import numbers

import numpy

from matndp.hw.bus.signature import CSR_DATA_WIDTH
from matndp.hw.csr_map import entry_register_name, register_map
from matndp.hw.config import NDPConfig
from matndp.hw.trigger.gather import MAX_GATHER_PORTS


__all__ = ["FilterRange", "Gathering", "RangeError", "DeviceError", "WindowError", "KernelError",
           "LoadedKernel", "NDPRuntime"]


_WORD_BYTES = CSR_DATA_WIDTH // 8


class RangeError(ValueError):
    """A filter range the runtime refuses to program (empty, misaligned, out of the
    address space, overlapping another enabled entry, or an entry index that does not exist)."""


class DeviceError(RuntimeError):
    """The device is not an NDP slice, or it does not match the configuration given."""


class KernelError(RuntimeError):
    """The engine stopped a kernel (the first error it recorded: entry, pc, cause), or a
    wait for completion ran out."""


class WindowError(ValueError):
    """A window access the runtime refuses before it reaches the bus: a window that does not
    exist or does not allow it, an offset that is not word-aligned, a span that leaves the
    window, or data that is not whole 32-bit words."""


def _window_words(name, data):
    """``data`` for :meth:`NDPRuntime.write_window` as a list of 32-bit words."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = numpy.frombuffer(bytes(data), dtype=numpy.uint8)
    if isinstance(data, numpy.ndarray):
        if data.dtype.kind not in "uif":
            raise WindowError(f"window {name!r}: a {data.dtype} array is not numbers to write")
        raw = numpy.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<")).reshape(-1).view(numpy.uint8)
        if raw.size % _WORD_BYTES:
            raise WindowError(f"window {name!r}: {raw.size} bytes are not whole "
                              f"{CSR_DATA_WIDTH}-bit words")
        return [int(word) for word in raw.view("<u4")]
    if isinstance(data, str):
        raise WindowError(f"window {name!r}: write words, bytes or an array, not a string")
    words = list(data)
    for index, word in enumerate(words):
        if not isinstance(word, numbers.Integral) or isinstance(word, bool) or \
                not 0 <= word < 1 << CSR_DATA_WIDTH:
            raise WindowError(f"window {name!r}: word {index} ({word!r}) is not a "
                              f"{CSR_DATA_WIDTH}-bit unsigned value")
    return [int(word) for word in words]


@dataclass(frozen=True)
class Gathering:
    """An entry's arrival gathering (docs/trigger.md, "Arrival gathering"): its range
    holds ``ports`` copies ``2^copy_log2`` bytes apart; each sector's ``ports``-th write
    starts the kernel, the others only count, in the table's slots from ``slot`` on (one
    per sector of a copy)."""

    ports: int
    copy_log2: int
    slot: int = 0

    def slots(self, config):
        """Table slots the entry takes (and arming clears): a copy's sectors."""
        return 1 << max(0, self.copy_log2 - config.offset_bits)


@dataclass(frozen=True)
class FilterRange:
    """What one filter entry watches and what it triggers.

    base, size:      the byte range ``[base, base + size)``, sector-aligned.
    on_write/on_read: which accesses trigger.
    kernel_pc, arg_index: the kernel entry and its argument block.
    expected:        triggers expected (e.g. the tensor's sectors); 0 for none.
    init_pc, final_pc: the initializer and finalizer, or None (engine only).
    init_threads, final_threads: the µthreads the initializer and the finalizer run as,
                     SEQ 0, 1, … (0 runs one).
    ordered:         the kernel's scratchpad atomics are applied in trigger order.
    gather:          a :class:`Gathering`: only each sector's K-th write starts the kernel
                     (``expected`` then counts sectors, not writes); None: every one does.
    """

    base: int
    size: int
    on_write: bool = True
    on_read: bool = False
    kernel_pc: int = 0
    arg_index: int = 0
    expected: int = 0
    init_pc: int | None = None
    final_pc: int | None = None
    init_threads: int = 1
    final_threads: int = 1
    ordered: bool = False
    gather: Gathering | None = None

    @property
    def end(self):
        return self.base + self.size


@dataclass(frozen=True)
class LoadedKernel:
    """A kernel image placed in the instruction memory: its entry points (absolute
    instruction indices) and whether its entries must be ordered."""

    name: str
    base: int
    main_pc: int
    init_pc: int | None
    final_pc: int | None
    ordered: bool
    size: int

    def filter_range(self, base, size, **fields):
        """A :class:`FilterRange` that runs this kernel on ``[base, base + size)``."""
        return FilterRange(base, size, kernel_pc=self.main_pc, init_pc=self.init_pc,
                           final_pc=self.final_pc, ordered=self.ordered, **fields)


class NDPRuntime:
    """Programs one NDP slice over ``bus`` (a :class:`~.csr_bus.CSRBus`): filter entries,
    kernels and argument blocks, and reads its status. ``config`` must be the
    :class:`~matndp.hw.config.NDPConfig` the slice was built with (:meth:`probe` checks)."""

    def __init__(self, bus, config=None):
        self.bus = bus
        self.config = config or NDPConfig()
        self.registers = register_map(self.config)
        self.ranges = {}
        self.kernels = {}
        self._next_pc = 0

    # --- register access by name ------------------------------------------------------------
    def _address(self, name):
        return self.registers[name].address

    def read_register(self, name):
        """The word of register ``name`` (a register map name, e.g. ``entry3.hits``)."""
        return self.bus.read(self._address(name))

    def write_register(self, name, value):
        """Write the word ``value`` to register ``name``."""
        self.bus.write(self._address(name), value)

    def read_fields(self, name):
        """Register ``name``'s field values by field name."""
        return self.registers[name].unpack(self.read_register(name))

    def write_fields(self, name, **values):
        """Write register ``name`` with ``values`` by field name (fields not named are 0)."""
        self.write_register(name, self.registers[name].pack(**values))

    def _write_split(self, name, value):
        for register, word in self.registers.split(name, value):
            self.bus.write(register.address, word)

    def _read_split(self, name):
        """The value of split field ``name``, its parts read least significant first."""
        value, lsb = 0, 0
        for register, field in self.registers.split_field(name):
            value |= register.unpack(self.bus.read(register.address))[field.name] << lsb
            lsb += field.width
        return value

    def probe(self):
        """Check that the bus reaches an NDP slice built with this runtime's configuration:
        the ID and every CONFIG field must read the constants of the register map. Returns
        the CONFIG fields found, by name."""
        magic = self.registers["id"].field("magic").value
        found_magic = self.read_fields("id")["magic"]
        if found_magic != magic:
            raise DeviceError(f"no NDP slice on this bus: ID reads {found_magic:#010x}, "
                              f"expected {magic:#010x}")
        config = self.registers["config"]
        try:
            found = self.read_fields("config")
        except ValueError as error:
            raise DeviceError(f"the device's CONFIG register does not match the register map: "
                              f"{error}") from None
        for field in config.fields:
            if found[field.name] != field.value:
                raise DeviceError(f"device has {field.name}={found[field.name]}, runtime "
                                  f"configured for {field.value}")
        return found

    # --- filter entries -------------------------------------------------------------------------
    def _field_width(self, index, register, field):
        return self.registers[entry_register_name(index, register)].field(field).width

    def _check_range(self, index, entry):
        config = self.config
        if not 0 <= index < config.trigger.filter_entries:
            raise RangeError(f"filter entry {index} does not exist (0..{config.trigger.filter_entries - 1})")
        if entry.size <= 0:
            raise RangeError(f"entry {index}: empty range (size {entry.size})")
        if entry.base < 0 or entry.end > 1 << config.addr_width:
            raise RangeError(f"entry {index}: range [{entry.base:#x}, {entry.end:#x}) leaves the "
                             f"{config.addr_width}-bit address space")
        if entry.base % config.sector_bytes or entry.size % config.sector_bytes:
            raise RangeError(f"entry {index}: base {entry.base:#x} and size {entry.size:#x} must be "
                             f"multiples of the {config.sector_bytes}-byte sector")
        if not (entry.on_write or entry.on_read):
            raise RangeError(f"entry {index}: triggers on neither writes nor reads")
        checked = [("kernel_pc", entry.kernel_pc, "kernel_pc", "pc"),
                   ("arg_index", entry.arg_index, "arg_index", "index"),
                   ("expected count", entry.expected, "expected", "count")]
        helpers = [("init_pc", entry.init_pc, "helper_pcs", "init"),
                   ("final_pc", entry.final_pc, "helper_pcs", "final")]
        if self.config.engine is None:
            if entry.ordered or entry.init_threads != 1 or entry.final_threads != 1 or \
                    any(value is not None for _, value, _, _ in helpers):
                raise RangeError(f"entry {index}: this slice has no engine to run an "
                                 f"initializer or finalizer or to order atomics")
        else:
            checked += [item for item in helpers if item[1] is not None]
            checked += [("init_threads", entry.init_threads, "init_threads", "count"),
                        ("final_threads", entry.final_threads, "final_threads", "count")]
        for what, value, register, field in checked:
            width = self._field_width(index, register, field)
            if not 0 <= value < 1 << width:
                raise RangeError(f"entry {index}: {what} {value} does not fit {width} bits")
        if entry.gather is not None:
            self._check_gathering(index, entry)
        for other_index, other in self.ranges.items():
            if other_index != index and entry.base < other.end and other.base < entry.end:
                raise RangeError(f"entry {index}: range [{entry.base:#x}, {entry.end:#x}) overlaps "
                                 f"entry {other_index} [{other.base:#x}, {other.end:#x})")

    def _check_gathering(self, index, entry):
        gather, config = entry.gather, self.config
        if not config.trigger.gather_sectors:
            raise RangeError(f"entry {index}: this slice has no arrival-gathering table "
                             f"(TriggerConfig.gather_sectors is 0)")
        if not 2 <= gather.ports <= MAX_GATHER_PORTS:
            raise RangeError(f"entry {index}: gathering takes 2 to {MAX_GATHER_PORTS} copies, "
                             f"not {gather.ports}")
        if not config.offset_bits <= gather.copy_log2 < config.addr_width:
            raise RangeError(f"entry {index}: copies of 2^{gather.copy_log2} bytes; a copy is at "
                             f"least a sector and within the address space")
        if entry.size > gather.ports << gather.copy_log2:
            raise RangeError(f"entry {index}: range of {entry.size:#x} bytes beyond its "
                             f"{gather.ports} copies of {1 << gather.copy_log2:#x}")
        slots = gather.slots(config)
        if gather.slot < 0 or gather.slot + slots > config.trigger.gather_sectors:
            raise RangeError(f"entry {index}: slots {gather.slot}..{gather.slot + slots - 1} "
                             f"beyond the table's {config.trigger.gather_sectors}")
        for other_index, other in self.ranges.items():
            if other_index != index and other.gather is not None and \
                    gather.slot < other.gather.slot + other.gather.slots(config) and \
                    other.gather.slot < gather.slot + slots:
                raise RangeError(f"entry {index}: table slots overlap entry {other_index}'s")

    def program(self, index, entry):
        """Program and enable filter entry ``index``; its hit counter restarts from zero."""
        self._check_range(index, entry)

        def name(register):
            return entry_register_name(index, register)
        if index in self.ranges:
            self._check_drained(index)
        # Disable first so that no request matches a half-written range; setting ENABLE at
        # the end arms the entry (its engine counters restart, its initializer runs).
        self.write_fields(name("ctrl"))
        self.ranges.pop(index, None)
        self._write_split(name("base"), entry.base)
        self._write_split(name("size"), entry.size)
        self.write_fields(name("kernel_pc"), pc=entry.kernel_pc)
        self.write_fields(name("arg_index"), index=entry.arg_index)
        self.write_fields(name("expected"), count=entry.expected)
        self.write_fields(name("hits"), count=0)
        control = {"enable": 1, "on_write": int(entry.on_write), "on_read": int(entry.on_read)}
        if self.config.engine is not None:
            self.write_fields(name("helper_pcs"), init=entry.init_pc or 0,
                              final=entry.final_pc or 0)
            self.write_fields(name("init_threads"), count=entry.init_threads)
            self.write_fields(name("final_threads"), count=entry.final_threads)
            control.update(ordered=int(entry.ordered), has_init=int(entry.init_pc is not None),
                           has_final=int(entry.final_pc is not None))
        if self.config.trigger.gather_sectors:
            gather = entry.gather or Gathering(0, 0)
            self.write_fields(name("gather"), ports=gather.ports, copy_log2=gather.copy_log2,
                              slot=gather.slot)
        self.write_fields(name("ctrl"), **control)
        self.ranges[index] = entry

    def _check_drained(self, index):
        """Refuse to re-program entry ``index`` while kernels it started may still run: every
        event it counted must have ended (or the entry been stopped by an error)."""
        if self.config.engine is None:
            return
        if self.stopped_mask() >> index & 1:
            return
        hits, completed = self.hits(index), self.completed(index)
        if completed < hits:
            raise RangeError(f"entry {index} is busy: {hits - completed} of its {hits} kernels "
                             f"have not ended; wait for them before re-programming it")

    def disable(self, index):
        """Disable filter entry ``index``: it matches nothing until programmed again."""
        if index not in self.ranges:
            raise RangeError(f"filter entry {index} is not programmed")
        self.write_fields(entry_register_name(index, "ctrl"))
        del self.ranges[index]

    # --- observation ----------------------------------------------------------------------------
    def hits(self, index):
        """The trigger events filter entry ``index`` produced since it was programmed."""
        return self.read_fields(entry_register_name(index, "hits"))["count"]

    def stall_cycles(self):
        """Cycles the trigger held the GPU path for a full event queue."""
        return self.read_fields("stall_cycles")["count"]

    def event_count(self):
        """Trigger events produced, all entries."""
        return self.read_fields("event_count")["count"]

    def done_mask(self):
        """COMPLETE of every entry, bit i for entry i (all its words)."""
        return self._read_split("complete")

    def enable_interrupts(self, mask):
        """Write IRQ_ENABLE: bit i lets entry i's COMPLETE bit raise ``irq`` (all its words;
        0 masks the interrupt off)."""
        entries = self.config.trigger.filter_entries
        if not 0 <= mask < 1 << entries:
            raise RangeError(f"interrupt mask {mask:#x} names entries beyond the "
                             f"{entries} this slice has")
        self._write_split("irq_enable", mask)

    def interrupt_mask(self):
        """IRQ_ENABLE of every entry, bit i for entry i."""
        return self._read_split("irq_enable")

    def stopped_mask(self):
        """STOPPED of every entry (engine only)."""
        return self._read_split("stopped")

    def completed(self, index):
        """Kernels of entry ``index`` that ended without error since it was armed."""
        return self.read_fields(entry_register_name(index, "completed"))["count"]

    def drained(self, index):
        """Events of entry ``index`` dropped since an error stopped it (engine only)."""
        return self.read_fields(entry_register_name(index, "drained"))["count"]

    def error(self):
        """The engine's recorded error as ``(entry, pc, cause)``, or None."""
        from matndp.hw.engine.isa import ErrorCause
        fields = self.read_fields("error")
        if not fields["recorded"]:
            return None
        return fields["entry"], self.read_fields("error_pc")["pc"], ErrorCause(fields["cause"])

    def clear_error(self):
        """Clear the recorded engine error, so that the next one is recorded."""
        self.write_fields("error", recorded=1)

    def set_memory_window(self, base, end):
        """Let kernels access only ``[base, end)``."""
        if not 0 <= base <= end <= 1 << self.config.addr_width:
            raise WindowError(f"memory window [{base:#x}, {end:#x}) is not inside the "
                              f"{self.config.addr_width}-bit address space")
        self._write_split("window_base", base)
        self._write_split("window_end", end)

    def set_watchdog(self, cycles):
        """Let a µthread live at most ``cycles`` cycles (engine only)."""
        self.write_fields("watchdog", cycles=cycles)

    # --- kernels and arguments --------------------------------------------------------------------
    def load_kernel(self, image):
        """Place ``image`` (a :class:`~.kernels.image.KernelImage`) after the kernels loaded
        so far and write it into the instruction memory; returns its :class:`LoadedKernel`."""
        from .kernels.image import Section
        if self.config.engine is None:
            raise DeviceError("this slice has no engine to load kernels into")
        capacity = self.config.engine.instruction_words
        base = self._next_pc
        if base + len(image.words) > capacity:
            raise WindowError(f"kernel {image.name!r} ({len(image.words)} instructions) does not "
                              f"fit: {capacity - base} of {capacity} instruction words are free")
        self.write_window("imem", 8 * base, numpy.array(image.words, dtype=numpy.uint64))
        self._next_pc = base + len(image.words)

        def entry_point(section):
            start = image.sections.get(section)
            return None if start is None else base + start
        loaded = LoadedKernel(image.name, base, entry_point(Section.MAIN), entry_point(Section.INIT),
                              entry_point(Section.FINAL), bool(image.uses_atomics), len(image.words))
        self.kernels[image.name] = loaded
        return loaded

    def write_arguments(self, block, words):
        """Write argument block ``block``: up to 16 64-bit words (the rest are zeroed)."""
        from matndp.hw.engine.isa import ARGUMENT_WORDS
        if self.config.engine is None:
            raise DeviceError("this slice has no engine to take arguments")
        if not 0 <= block < self.config.engine.argument_blocks:
            raise WindowError(f"argument block {block} does not exist "
                              f"(0..{self.config.engine.argument_blocks - 1})")
        words = list(words)
        if len(words) > ARGUMENT_WORDS:
            raise WindowError(f"an argument block holds {ARGUMENT_WORDS} words, not {len(words)}")
        for position, word in enumerate(words):
            if not isinstance(word, numbers.Integral) or not 0 <= word < 1 << 64:
                raise WindowError(f"argument word {position} ({word!r}) is not a 64-bit unsigned value")
        padded = numpy.zeros(ARGUMENT_WORDS, dtype=numpy.uint64)
        padded[:len(words)] = words
        self.write_window("args", 8 * ARGUMENT_WORDS * block, padded)

    def id_reuse_flag(self):
        """Whether a read was issued while another with the same id was outstanding."""
        return bool(self.read_fields("status")["id_reuse"])

    def clear_counters(self):
        """Zero STALL_CYCLES and EVENT_COUNT."""
        self.write_fields("stall_cycles", count=0)
        self.write_fields("event_count", count=0)

    # --- windows --------------------------------------------------------------------------------
    def _window(self, name, offset, count, direction):
        """The window ``name``, checked for ``count`` words from byte ``offset`` in
        ``direction`` ("readable" or "writable")."""
        try:
            window = self.registers.window(name)
        except KeyError:
            raise WindowError(f"no window {name!r} (windows: "
                              f"{', '.join(w.name for w in self.registers.windows)})") from None
        if not getattr(window, direction):
            raise WindowError(f"window {name!r} is not {direction}")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0 or offset % _WORD_BYTES:
            raise WindowError(f"window {name!r}: offset {offset!r} is not a non-negative multiple "
                              f"of {_WORD_BYTES}")
        end = offset + _WORD_BYTES * count
        if end > window.size:
            raise WindowError(f"window {name!r}: bytes [{offset:#x}, {end:#x}) leave its "
                              f"{window.size:#x} bytes")
        return window

    def write_window(self, name, offset, data):
        """Write ``data`` into window ``name`` from byte ``offset`` (a multiple of 4) up.

        ``data`` is a sequence of 32-bit words (ints), or bytes (``bytes``, ``bytearray``,
        a numpy array of numbers) written as they lie in memory, little-endian: a
        ``uint64`` array writes each 64-bit word low half first, as the instruction memory
        and the argument blocks hold them. Everything is checked before the first write; a
        bus error stops the writing at the word it names."""
        words = _window_words(name, data)
        window = self._window(name, offset, len(words), "writable")
        self.bus.write_words(window.base + offset, words)

    def read_window(self, name, offset, count):
        """``count`` 32-bit words of window ``name`` from byte ``offset`` (a multiple of 4)
        up, as a numpy ``uint32`` array (``.view(numpy.uint64)`` pairs them into 64-bit
        words, low half first; ``.tobytes()`` gives the bytes)."""
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise WindowError(f"window {name!r}: count {count!r} is not a non-negative int")
        window = self._window(name, offset, count, "readable")
        return numpy.array(self.bus.read_words(window.base + offset, count), dtype="<u4")
