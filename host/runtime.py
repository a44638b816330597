"""The NDP runtime: programs an NDP slice's filter entries over a CSR bus and reads its
counters. The same code drives the RTL in co-simulation and would drive hardware.
"""

from dataclasses import dataclass

from matndp.hw.csr_map import MAGIC, register_map
from matndp.hw.config import NDPConfig


__all__ = ["FilterRange", "RangeError", "DeviceError", "NDPRuntime"]


class RangeError(ValueError):
    """A filter range the runtime refuses to program (empty, misaligned, out of the
    address space, overlapping another enabled entry, or an entry index that does not exist)."""


class DeviceError(RuntimeError):
    """The device is not an NDP slice, or it does not match the configuration given."""


@dataclass(frozen=True)
class FilterRange:
    """What one filter entry watches and what it triggers.

    base, size:      the byte range ``[base, base + size)``, sector-aligned.
    on_write/on_read: which accesses trigger.
    kernel_pc, arg_index: the kernel entry and its argument block.
    expected:        triggers expected (e.g. the tensor's sectors); 0 for none.
    """

    base: int
    size: int
    on_write: bool = True
    on_read: bool = False
    kernel_pc: int = 0
    arg_index: int = 0
    expected: int = 0

    @property
    def end(self):
        return self.base + self.size


class NDPRuntime:
    def __init__(self, bus, config=None):
        self.bus = bus
        self.config = config or NDPConfig()
        self.registers = register_map(self.config)
        self.ranges = {}

    # --- register access by name ------------------------------------------------------------
    def _address(self, name):
        return self.registers[name].address

    def read_register(self, name):
        return self.bus.read(self._address(name))

    def write_register(self, name, value):
        self.bus.write(self._address(name), value)

    def probe(self):
        """Check that the bus reaches an NDP slice built with this runtime's configuration."""
        magic = self.read_register("id")
        if magic != MAGIC:
            raise DeviceError(f"no NDP slice on this bus: ID reads {magic:#010x}, expected {MAGIC:#010x}")
        word = self.read_register("config")
        found = {"filter_entries": word & 0xFF, "sector_bytes": (word >> 8) & 0xFF,
                 "addr_width": (word >> 16) & 0x7F, "id_width": (word >> 24) & 0xF}
        expected = {"filter_entries": self.config.trigger.filter_entries,
                    "sector_bytes": self.config.sector_bytes,
                    "addr_width": self.config.addr_width, "id_width": self.config.id_width}
        for name, value in found.items():
            if expected[name] != value:
                raise DeviceError(f"device has {name}={value}, runtime configured for "
                                  f"{expected[name]}")
        return found

    # --- filter entries -------------------------------------------------------------------------
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
        if not 0 <= entry.kernel_pc < 1 << 16:
            raise RangeError(f"entry {index}: kernel_pc {entry.kernel_pc} does not fit 16 bits")
        if not 0 <= entry.arg_index < 1 << 8:
            raise RangeError(f"entry {index}: arg_index {entry.arg_index} does not fit 8 bits")
        if not 0 <= entry.expected < 1 << config.counter_width:
            raise RangeError(f"entry {index}: expected count {entry.expected} does not fit "
                             f"{config.counter_width} bits")
        for other_index, other in self.ranges.items():
            if other_index != index and entry.base < other.end and other.base < entry.end:
                raise RangeError(f"entry {index}: range [{entry.base:#x}, {entry.end:#x}) overlaps "
                                 f"entry {other_index} [{other.base:#x}, {other.end:#x})")

    def program(self, index, entry):
        """Program and enable filter entry ``index``; its hit counter restarts from zero."""
        self._check_range(index, entry)
        prefix = f"entry{index}."
        # Disable first so that no request matches a half-written range.
        self.write_register(prefix + "ctrl", 0)
        self.ranges.pop(index, None)
        self.write_register(prefix + "base_lo", entry.base & 0xFFFF_FFFF)
        self.write_register(prefix + "base_hi", entry.base >> 32)
        self.write_register(prefix + "size_lo", entry.size & 0xFFFF_FFFF)
        self.write_register(prefix + "size_hi", entry.size >> 32)
        self.write_register(prefix + "kernel_pc", entry.kernel_pc)
        self.write_register(prefix + "arg_index", entry.arg_index)
        self.write_register(prefix + "expected", entry.expected)
        self.write_register(prefix + "hits", 0)
        self.write_register(prefix + "ctrl", 1 | int(entry.on_write) << 1 | int(entry.on_read) << 2)
        self.ranges[index] = entry

    def disable(self, index):
        if index not in self.ranges:
            raise RangeError(f"filter entry {index} is not programmed")
        self.write_register(f"entry{index}.ctrl", 0)
        del self.ranges[index]

    # --- observation ----------------------------------------------------------------------------
    def hits(self, index):
        return self.read_register(f"entry{index}.hits")

    def stall_cycles(self):
        return self.read_register("stall_cycles")

    def event_count(self):
        return self.read_register("event_count")

    def done_mask(self):
        return self.read_register("hit_done")

    def id_reuse_flag(self):
        return bool(self.read_register("status") & 1)

    def clear_counters(self):
        self.write_register("stall_cycles", 0)
        self.write_register("event_count", 0)


