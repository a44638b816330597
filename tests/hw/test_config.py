import dataclasses

import pytest

from matndp.hw.config import (NAMED_CONFIGS, SLICE_VARIABLE, EngineConfig, NDPConfig, TriggerConfig,
                             named_config, slice_config, slice_config_name)


def test_defaults_follow_the_architecture():
    config = NDPConfig()
    assert (config.addr_width, config.sector_bytes, config.trigger.filter_entries) == (40, 32, 16)
    assert config.data_width == 256 and config.trigger.entry_bits == 4
    assert not config.trigger.pipelined and not config.engine.pipelined


@pytest.mark.parametrize("make, message", [
    (lambda: NDPConfig(sector_bytes=24), "sector_bytes"),
    (lambda: NDPConfig(addr_width=8), "addr_width"),
    (lambda: NDPConfig(trigger=TriggerConfig(filter_entries=0)), "filter_entries"),
    (lambda: NDPConfig(trigger=TriggerConfig(event_queue_depth=1)), "event_queue_depth"),
    (lambda: TriggerConfig(pipelined=1), "TriggerConfig.pipelined must be a bool, not 1"),
    (lambda: EngineConfig(pipelined="yes"), "EngineConfig.pipelined must be a bool, not 'yes'"),
    (lambda: EngineConfig(reduce_tree=0), "EngineConfig.reduce_tree must be a bool, not 0"),
    (lambda: EngineConfig(posted_stores=1), "EngineConfig.posted_stores must be a bool, not 1"),
    (lambda: EngineConfig(writeback_spills=None),
     "EngineConfig.writeback_spills must be a bool, not None"),
    (lambda: EngineConfig(vector_read_ports=1),
     r"EngineConfig.vector_read_ports must be in 2..3, not 1"),
    (lambda: EngineConfig(vector_read_ports=4),
     r"EngineConfig.vector_read_ports must be in 2..3, not 4"),
    (lambda: EngineConfig(memory_queue=-1), r"EngineConfig.memory_queue must be in 0..64, not -1"),
    (lambda: EngineConfig(memory_queue=65), r"EngineConfig.memory_queue must be in 0..64, not 65"),
    (lambda: EngineConfig(memory_queue=None), "EngineConfig.memory_queue must be an int"),
    (lambda: NDPConfig(id_width=True), "id_width"),
    (lambda: NDPConfig(trigger={"filter_entries": 4}), "TriggerConfig"),
    (lambda: EngineConfig(in_flight=0), r"EngineConfig.in_flight must be in 1..8, not 0"),
    (lambda: EngineConfig(in_flight=9), r"EngineConfig.in_flight must be in 1..8, not 9"),
    (lambda: EngineConfig(in_flight=2.0), "EngineConfig.in_flight must be an int"),
    (lambda: EngineConfig(in_flight=1),
     r"EngineConfig.memory_first needs the scoreboard's look at the next instruction "
     r"\(in_flight above 1\); with in_flight 1, set memory_first=False"),
    (lambda: EngineConfig(memory_first=1), "EngineConfig.memory_first must be a bool, not 1"),
    (lambda: EngineConfig(fma_units=3), r"EngineConfig.fma_units must be a power of two in 1..32, not 3"),
    (lambda: EngineConfig(fma_units=0), r"EngineConfig.fma_units must be a power of two in 1..32, not 0"),
    (lambda: EngineConfig(fma_units=True), r"EngineConfig.fma_units must be a power of two"),
    (lambda: NDPConfig(engine=EngineConfig(fma_units=16)),
     r"EngineConfig.fma_units \(16\) exceeds the 8 lanes of a 32-byte sector"),
    (lambda: EngineConfig(misc_units=6), r"EngineConfig.misc_units must be a power of two in 1..32, not 6"),
    (lambda: NDPConfig(engine=EngineConfig(misc_units=32)),
     r"EngineConfig.misc_units \(32\) exceeds the 8 lanes of a 32-byte sector"),
])
def test_bad_configuration_is_refused_by_name(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_named_configurations_are_looked_up_by_name():
    assert list(NAMED_CONFIGS) == ["default", "channel", "fpga"]
    default = named_config("default")
    # 32 slots, which hide a memory latency of 100 cycles; the rest of the engine as by default.
    assert default.engine.slots == 32 > NDPConfig().engine.slots
    assert dataclasses.replace(default.engine, slots=NDPConfig().engine.slots) == NDPConfig().engine
    # The initializers' 40-60 cycles of a stream at one write every 4 cycles wait in the queue.
    assert default.trigger.event_queue_depth * 4 >= 64 > NDPConfig().trigger.event_queue_depth * 4
    channel, fpga = named_config("channel"), named_config("fpga")
    assert channel.engine.sub_cores > NDPConfig().engine.sub_cores
    assert fpga.engine.slots < NDPConfig().engine.slots and fpga.engine.in_flight == 1
    assert fpga.fma_units < fpga.lanes == NDPConfig().fma_units
    assert fpga.misc_units < fpga.lanes == NDPConfig().misc_units
    assert fpga.trigger.filter_entries == fpga.engine.argument_blocks
    # ... and, in channel, while the initializer of a 768-column row holds every slot.
    assert channel.trigger.event_queue_depth == 4 * default.trigger.event_queue_depth
    assert fpga.trigger.event_queue_depth == NDPConfig().trigger.event_queue_depth
    assert fpga.engine.pipelined and not fpga.engine.reduce_tree
    assert not fpga.engine.writeback_spills and NDPConfig().engine.writeback_spills
    assert fpga.engine.vector_read_ports == 2 < NDPConfig().engine.vector_read_ports
    assert fpga.engine.memory_queue == 0 < NDPConfig().engine.memory_queue
    assert not fpga.engine.posted_stores and default.engine.posted_stores and \
        channel.engine.posted_stores
    # Under a saturating GPU stream the engine takes every other memory slot it wants.
    assert default.arbiter.ndp_share_period == channel.arbiter.ndp_share_period == 2
    assert fpga.arbiter == NDPConfig().arbiter
    assert all(isinstance(config, NDPConfig) and config.engine is not None
               for config in NAMED_CONFIGS.values())


@pytest.mark.parametrize("name", ["fast", "", "Default", None])
def test_unknown_configuration_names_the_known_ones(name):
    with pytest.raises(ValueError, match=r"unknown configuration .*; known: default, channel, fpga$"):
        named_config(name)


@pytest.mark.parametrize("value, name", [(None, "default"), ("", "default"),
                                         ("channel", "channel"), ("fpga", "fpga")])
def test_the_flows_slice_is_the_one_the_variable_names(monkeypatch, value, name):
    if value is None:
        monkeypatch.delenv(SLICE_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(SLICE_VARIABLE, value)
    assert slice_config_name() == name
    assert slice_config() is named_config(name)


@pytest.mark.parametrize("value", ["fast", "Default", " default"])
def test_an_unknown_slice_name_in_the_variable_names_the_known_ones(monkeypatch, value):
    monkeypatch.setenv(SLICE_VARIABLE, value)
    with pytest.raises(ValueError, match=rf"^MATNDP_SLICE='{value}': choose one of default, "
                                         r"channel, fpga$"):
        slice_config()
