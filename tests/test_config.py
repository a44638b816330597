import pytest

from hw.config import NDPConfig
from hw.csr_map import register_map, ENTRY_BLOCK_BASE, ENTRY_STRIDE


def test_defaults_follow_the_architecture():
    config = NDPConfig()
    assert (config.addr_width, config.sector_bytes, config.filter_entries) == (40, 32, 16)
    assert config.data_width == 256 and config.entry_bits == 4


@pytest.mark.parametrize("kwargs, message", [
    ({"sector_bytes": 24}, "sector_bytes"),
    ({"addr_width": 8}, "addr_width"),
    ({"filter_entries": 0}, "filter_entries"),
    ({"event_queue_depth": 1}, "event_queue_depth"),
    ({"id_width": True}, "id_width"),
])
def test_bad_configuration_is_refused_by_name(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        NDPConfig(**kwargs)


def test_register_map_lays_entries_out_at_a_fixed_stride():
    config = NDPConfig(filter_entries=4)
    registers = register_map(config)
    for index in range(4):
        assert registers[f"entry{index}.ctrl"].address == ENTRY_BLOCK_BASE + index * ENTRY_STRIDE
    addresses = [register.address for register in registers]
    assert len(addresses) == len(set(addresses))
    assert registers["entry3.base_hi"].field("base").width == config.addr_width - 32


def test_register_map_refuses_what_it_cannot_lay_out():
    with pytest.raises(ValueError, match="at most 32 filter entries"):
        register_map(NDPConfig(filter_entries=33))
