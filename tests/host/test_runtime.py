"""The host runtime on the Python register model: programming and refusals."""

import pytest

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.csr_map import register_map, MAGIC
from matndp.host.csr_bus import CSRAccessError, RegisterModelBus
from matndp.host.runtime import DeviceError, FilterRange, NDPRuntime, RangeError


def make_runtime(config=NDPConfig()):
    bus = RegisterModelBus(register_map(config))
    return NDPRuntime(bus, config), bus


def test_program_writes_the_documented_registers():
    runtime, bus = make_runtime()
    runtime.program(3, FilterRange(0x12_3456_7800, 0x2_0000_0040, on_write=True, on_read=True,
                                   kernel_pc=0x42, arg_index=5, expected=17))
    registers = runtime.registers
    base = registers["entry3.ctrl"].address
    names = ("ctrl", "base_lo", "base_hi", "size_lo", "size_hi", "kernel_pc", "arg_index", "expected",
             "hits")
    assert [registers[f"entry3.{name}"].address - base for name in names] == list(range(0, 0x24, 4))
    assert [bus.values[base + offset] for offset in range(0, 0x24, 4)] == \
        [0b111, 0x3456_7800, 0x12, 0x0000_0040, 0x2, 0x42, 5, 17, 0]
    # The entry is disabled before its range changes and enabled last.
    writes = [entry for entry in bus.log if entry[0] == "write"]
    assert writes[0][1:] == (base, 0) and writes[-1][1] == base


def test_probe_checks_identity_and_configuration():
    runtime, bus = make_runtime()
    assert runtime.probe()["filter_entries"] == 16
    other, _ = make_runtime(NDPConfig(trigger=TriggerConfig(filter_entries=8)))
    other.bus = bus
    with pytest.raises(DeviceError, match="filter_entries=16"):
        other.probe()
    bus.values[0] = MAGIC ^ 1
    with pytest.raises(DeviceError, match="no NDP slice"):
        runtime.probe()


@pytest.mark.parametrize("field, value", [("sector_bytes", 64), ("addr_width", 48), ("id_width", 4)])
def test_probe_compares_every_configuration_field(field, value):
    runtime, bus = make_runtime()
    config = runtime.registers["config"]
    found = config.unpack(bus.values[config.address])
    bus.values[config.address] = config.pack(**{**found, field: value})
    with pytest.raises(DeviceError, match=f"device has {field}={value}, runtime configured for"):
        runtime.probe()


def test_probe_refuses_a_configuration_word_with_stray_bits():
    runtime, bus = make_runtime()
    bus.values[runtime.registers["config"].address] |= 1 << 31
    with pytest.raises(DeviceError, match="CONFIG register does not match the register map.*0x80000000"):
        runtime.probe()


def test_counters_and_flags_are_read_by_field():
    runtime, bus = make_runtime()
    registers = runtime.registers
    bus.values[registers["entry2.hits"].address] = 41
    bus.values[registers["stall_cycles"].address] = 7
    bus.values[registers["event_count"].address] = 0xFFFF_FFFF
    bus.values[registers["hit_done"].address] = 0b1010
    assert (runtime.hits(2), runtime.stall_cycles(), runtime.event_count(), runtime.done_mask()) == \
        (41, 7, 0xFFFF_FFFF, 0b1010)
    assert not runtime.id_reuse_flag()
    bus.values[registers["status"].address] = 1
    assert runtime.id_reuse_flag()
    runtime.write_fields("status", id_reuse=1)          # write 1 to clear
    assert not runtime.id_reuse_flag()
    runtime.clear_counters()
    assert (runtime.stall_cycles(), runtime.event_count(), runtime.hits(2)) == (0, 0, 41)


def test_the_register_model_keeps_what_the_hardware_keeps():
    runtime, bus = make_runtime()
    ctrl = runtime.registers["entry0.ctrl"].address
    bus.write(ctrl, 0xFFFF_FFFF)
    assert bus.values[ctrl] == 0b111
    bus.write(runtime.registers["irq_enable"].address, 0xFFFF_FFFF)
    assert bus.values[runtime.registers["irq_enable"].address] == 0xFFFF
    with pytest.raises(ValueError, match="does not fit a 32-bit register"):
        bus.write(ctrl, 1 << 32)
    with pytest.raises(KeyError, match="register 'entry0.ctrl' has no field 'enabled'"):
        runtime.write_fields("entry0.ctrl", enabled=1)


@pytest.mark.parametrize("index, entry, message", [
    (0, FilterRange(0x1000, 0), "empty range"),
    (0, FilterRange(0x1000, -32), "empty range"),
    (0, FilterRange(0x1010, 0x100), "multiples of the 32-byte sector"),
    (0, FilterRange(0x1000, 0x110), "multiples of the 32-byte sector"),
    (0, FilterRange((1 << 40) - 0x20, 0x40), "leaves the 40-bit address space"),
    (0, FilterRange(0x1000, 0x100, on_write=False, on_read=False), "neither writes nor reads"),
    (16, FilterRange(0x1000, 0x100), "entry 16 does not exist"),
    (-1, FilterRange(0x1000, 0x100), "entry -1 does not exist"),
    (0, FilterRange(0x1000, 0x100, kernel_pc=1 << 16), "kernel_pc"),
    (0, FilterRange(0x1000, 0x100, expected=1 << 32), "expected count"),
])
def test_bad_ranges_are_refused_by_name(index, entry, message):
    runtime, bus = make_runtime()
    with pytest.raises(RangeError, match=message):
        runtime.program(index, entry)
    assert bus.log == []


@pytest.mark.parametrize("other", [
    FilterRange(0x1000, 0x100), FilterRange(0x0F00, 0x120), FilterRange(0x10E0, 0x40),
    FilterRange(0x0000, 0x10000),
])
def test_overlapping_ranges_are_refused(other):
    runtime, _ = make_runtime()
    runtime.program(0, FilterRange(0x1000, 0x100))
    with pytest.raises(RangeError, match="overlaps entry 0"):
        runtime.program(1, other)


def test_adjacent_ranges_and_reprogramming_are_allowed():
    runtime, _ = make_runtime()
    runtime.program(0, FilterRange(0x1000, 0x100))
    runtime.program(1, FilterRange(0x1100, 0x100))
    runtime.program(1, FilterRange(0x1100, 0x200))      # an entry may move over its own range
    runtime.disable(0)
    runtime.program(2, FilterRange(0x1000, 0x100))      # freed by disabling entry 0
    with pytest.raises(RangeError, match="not programmed"):
        runtime.disable(0)


def test_bus_errors_surface():
    runtime, bus = make_runtime()
    with pytest.raises(CSRAccessError, match="no register at 0x7fc"):
        bus.read(0x7FC)
    with pytest.raises(CSRAccessError, match="read-only"):
        runtime.write_register("id", 1)
