import pytest

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.bus.map import Access
from matndp.hw.csr_map import register_map, ENTRY_ARRAY, ENTRY_BLOCK_BASE, ENTRY_STRIDE, MAGIC


def test_defaults_follow_the_architecture():
    config = NDPConfig()
    assert (config.addr_width, config.sector_bytes, config.trigger.filter_entries) == (40, 32, 16)
    assert config.data_width == 256 and config.trigger.entry_bits == 4


@pytest.mark.parametrize("make, message", [
    (lambda: NDPConfig(sector_bytes=24), "sector_bytes"),
    (lambda: NDPConfig(addr_width=8), "addr_width"),
    (lambda: NDPConfig(trigger=TriggerConfig(filter_entries=0)), "filter_entries"),
    (lambda: NDPConfig(trigger=TriggerConfig(event_queue_depth=1)), "event_queue_depth"),
    (lambda: NDPConfig(id_width=True), "id_width"),
    (lambda: NDPConfig(trigger={"filter_entries": 4}), "TriggerConfig"),
])
def test_bad_configuration_is_refused_by_name(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


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
                 "stall_cycles": 0x010, "event_count": 0x014, "hit_done": 0x018, "irq_enable": 0x01C,
                 "entry0.ctrl": 0x100, "entry0.hits": 0x120, "entry5.base_lo": 0x244,
                 "entry15.kernel_pc": 0x4D4, "entry15.hits": 0x4E0}
    assert {name: registers[name].address for name in addresses} == addresses
    assert registers["id"].reset_value == MAGIC == 0x6D4E4450
    assert registers["version"].reset_value == 0x0001_0000
    assert registers["config"].reset_value == 16 | 32 << 8 | 40 << 16 | 8 << 24
    assert registers["entry2.ctrl"].pack(enable=1, on_read=1) == 0b101
    assert registers.addr_width == 11


def test_build_parameters_are_constants_of_the_map():
    config = NDPConfig(addr_width=48, sector_bytes=64, id_width=4, trigger=TriggerConfig(filter_entries=4))
    found = register_map(config)["config"]
    assert all(field.access is Access.CONST for field in found.fields)
    assert found.unpack(found.reset_value) == {"filter_entries": 4, "sector_bytes": 64,
                                               "addr_width": 48, "id_width": 4}


def test_register_map_refuses_what_it_cannot_lay_out():
    with pytest.raises(ValueError, match="at most 32 filter entries"):
        register_map(NDPConfig(trigger=TriggerConfig(filter_entries=33)))
