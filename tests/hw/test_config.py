import pytest

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.csr_map import register_map, ENTRY_BLOCK_BASE, ENTRY_STRIDE


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


def test_register_map_refuses_what_it_cannot_lay_out():
    with pytest.raises(ValueError, match="at most 32 filter entries"):
        register_map(NDPConfig(trigger=TriggerConfig(filter_entries=33)))
