import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig


def test_defaults_follow_the_architecture():
    config = NDPConfig()
    assert (config.addr_width, config.sector_bytes, config.trigger.filter_entries) == (40, 32, 16)
    assert config.data_width == 256 and config.trigger.entry_bits == 4
    assert not config.trigger.pipelined


@pytest.mark.parametrize("make, message", [
    (lambda: NDPConfig(sector_bytes=24), "sector_bytes"),
    (lambda: NDPConfig(addr_width=8), "addr_width"),
    (lambda: NDPConfig(trigger=TriggerConfig(filter_entries=0)), "filter_entries"),
    (lambda: NDPConfig(trigger=TriggerConfig(event_queue_depth=1)), "event_queue_depth"),
    (lambda: TriggerConfig(pipelined=1), "TriggerConfig.pipelined must be a bool, not 1"),
    (lambda: NDPConfig(id_width=True), "id_width"),
    (lambda: NDPConfig(trigger={"filter_entries": 4}), "TriggerConfig"),
    (lambda: EngineConfig(in_flight=0), r"EngineConfig.in_flight must be in 1..8, not 0"),
    (lambda: EngineConfig(in_flight=9), r"EngineConfig.in_flight must be in 1..8, not 9"),
    (lambda: EngineConfig(in_flight=2.0), "EngineConfig.in_flight must be an int"),
])
def test_bad_configuration_is_refused_by_name(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()
