"""The slice's register map: the documented layout, written out independently of the map, and
the parameters it follows."""

import pytest

from matndp.hw.bus.map import Access
from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.csr_map import (ARGS_WINDOW, ENTRY_ARRAY, ENTRY_BLOCK_BASE, ENTRY_STRIDE,
                               IMEM_WINDOW, MAGIC, SCRATCHPAD_WINDOW, register_map)


def test_register_map_lays_entries_out_at_a_fixed_stride():
    config = NDPConfig(trigger=TriggerConfig(filter_entries=4))
    registers = register_map(config)
    for index in range(4):
        assert registers[f"entry{index}.ctrl"].address == ENTRY_BLOCK_BASE + index * ENTRY_STRIDE
    addresses = [register.address for register in registers]
    assert len(addresses) == len(set(addresses))
    assert registers["entry3.base_hi"].field("base").width == config.addr_width - 32
    entries = registers.array(ENTRY_ARRAY)
    assert (entries.base, entries.stride, len(entries)) == (ENTRY_BLOCK_BASE, ENTRY_STRIDE, 4)
    assert [block.size for block in entries.blocks] == [ENTRY_STRIDE] * 4


def test_register_map_keeps_the_documented_layout():
    """The addresses and bits software relies on, written out independently of the map."""
    registers = register_map(NDPConfig())
    addresses = {"id": 0x000, "version": 0x004, "config": 0x008, "status": 0x00C,
                 "stall_cycles": 0x010, "event_count": 0x014, "complete": 0x018, "irq_enable": 0x01C,
                 "entry0.ctrl": 0x100, "entry0.hits": 0x120, "entry5.base_lo": 0x244,
                 "entry15.kernel_pc": 0x4D4, "entry15.hits": 0x4E0}
    assert {name: registers[name].address for name in addresses} == addresses
    assert registers["id"].reset_value == MAGIC == 0x6D4E4450
    assert registers["version"].reset_value == 0x0001_0000
    assert registers["config"].reset_value == 16 | 32 << 8 | 40 << 16 | 8 << 24
    assert registers["entry2.ctrl"].pack(enable=1, on_read=1) == 0b101
    # The register file reaches the registers; the bus reaches the windows above them too.
    assert registers.register_addr_width == 11
    windows = {window.name: (window.base, window.size, window.readable, window.writable)
               for window in registers.windows}
    assert windows == {"args": (0x1_0000, 32 * 16 * 8, True, True),
                       "imem": (0x2_0000, 1024 * 8, True, True),
                       "scratchpad": (0x10_0000, 32768, True, True)}
    assert registers.addr_width == 21
    assert (ARGS_WINDOW, IMEM_WINDOW, SCRATCHPAD_WINDOW) == ("args", "imem", "scratchpad")


def test_build_parameters_are_constants_of_the_map():
    config = NDPConfig(addr_width=48, sector_bytes=64, id_width=4, trigger=TriggerConfig(filter_entries=4))
    found = register_map(config)["config"]
    assert all(field.access is Access.CONST for field in found.fields)
    assert found.unpack(found.reset_value) == {"filter_entries": 4, "sector_bytes": 64,
                                               "addr_width": 48, "id_width": 4}


@pytest.mark.parametrize("addr_width, words", [(16, 1), (32, 1), (33, 2), (40, 2), (64, 2)])
def test_a_ranges_base_and_size_take_the_words_their_width_needs(addr_width, words):
    registers = register_map(NDPConfig(addr_width=addr_width, trigger=TriggerConfig(filter_entries=2)))
    for name in ("base", "size"):
        parts = registers.split_field(f"entry1.{name}")
        assert [register.name for register, _ in parts] == [f"entry1.{name}_lo", f"entry1.{name}_hi"][:words]
        assert [field.width for _, field in parts] == [min(32, addr_width), addr_width - 32][:words]
        assert registers.split_width(f"entry1.{name}") == addr_width
    # The words keep their addresses; an absent high word is unmapped.
    assert registers["entry1.base_lo"].address == 0x144 and registers["entry1.size_lo"].address == 0x14C
    assert (registers.at(0x148) is None) == (words == 1)
    value = (1 << addr_width) - 0x20
    assert [word for _, word in registers.split("entry1.base", value)] == \
        [value & 0xFFFF_FFFF, value >> 32][:words]


@pytest.mark.parametrize("entries", [1, 16, 32, 33, 64])
def test_the_entry_masks_take_a_word_per_32_entries(entries):
    registers = register_map(NDPConfig(trigger=TriggerConfig(filter_entries=entries)))
    words = [min(32, entries), entries - 32][:1 + (entries > 32)]
    for name, addresses in (("complete", (0x018, 0x020)), ("irq_enable", (0x01C, 0x024))):
        parts = registers.split_field(name)
        assert [(register.name, register.address, field.width) for register, field in parts] == \
            list(zip((name, f"{name}_hi"), addresses, words))
    assert registers["complete"].field("mask").access is Access.RO
    assert registers["irq_enable_hi" if entries > 32 else "irq_enable"].field("mask").access is Access.RW
    last = registers.array(ENTRY_ARRAY)[entries - 1]
    assert last.base == ENTRY_BLOCK_BASE + (entries - 1) * ENTRY_STRIDE
    assert last.end <= registers.windows[0].base


def test_the_windows_are_sized_by_the_engine_and_never_move():
    small = register_map(NDPConfig(engine=EngineConfig(instruction_words=64, argument_blocks=1,
                                                       scratchpad_bytes=256)))
    large = register_map(NDPConfig(engine=EngineConfig(instruction_words=16384, argument_blocks=256,
                                                       scratchpad_bytes=1 << 20)))
    assert [(w.name, w.base, w.size) for w in small.windows] == \
        [("args", 0x1_0000, 128), ("imem", 0x2_0000, 512), ("scratchpad", 0x10_0000, 256)]
    assert [(w.name, w.base, w.size) for w in large.windows] == \
        [("args", 0x1_0000, 0x8000), ("imem", 0x2_0000, 0x2_0000), ("scratchpad", 0x10_0000, 0x10_0000)]
    assert small.addr_width == large.addr_width == 21
