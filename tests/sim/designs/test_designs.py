"""The designs testbenches run, and a configuration's way into a testbench."""

import json

import pytest

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.sim.designs import (CONFIG_VARIABLE, config_environment, config_from_environment,
                                config_from_json, evaluate_at_time_zero, memory_port_fifos_verilog)


CONFIGS = [NDPConfig(), NDPConfig(sector_bytes=64, id_width=4, trigger=TriggerConfig(filter_entries=4)),
           NDPConfig(addr_width=48, sector_bytes=16, id_width=2, counter_width=16,
                     trigger=TriggerConfig(filter_entries=1, event_queue_depth=3))]


@pytest.mark.parametrize("config", CONFIGS)
def test_a_configuration_survives_the_environment(config, monkeypatch):
    environment = config_environment(config)
    assert set(environment) == {CONFIG_VARIABLE}
    monkeypatch.setenv(CONFIG_VARIABLE, environment[CONFIG_VARIABLE])
    assert config_from_environment() == config


def test_no_configuration_in_the_environment_means_the_default(monkeypatch):
    monkeypatch.delenv(CONFIG_VARIABLE, raising=False)
    assert config_from_environment() == NDPConfig()


@pytest.mark.parametrize("text, error, message", [
    ("{", ValueError, "MATNDP_CONFIG: not JSON"),
    ("[1, 2]", ValueError, "expected an object of NDPConfig parameters"),
    ('{"sector_size": 32}', ValueError, "NDPConfig has no parameter.s. sector_size"),
    ('{"trigger": {"entries": 4}}', ValueError, "MATNDP_CONFIG.trigger: TriggerConfig has no parameter.s. entries"),
    ('{"trigger": 4}', ValueError, "MATNDP_CONFIG.trigger: expected an object of TriggerConfig parameters"),
    ('{"sector_bytes": 24}', ValueError, "sector_bytes must be a power of two"),
    ('{"id_width": "8"}', TypeError, "NDPConfig.id_width must be an int"),
    ('{"trigger": {"filter_entries": 0}}', ValueError, "filter_entries must be in 1..64"),
])
def test_bad_configurations_are_refused_by_name(text, error, message):
    with pytest.raises(error, match=message):
        config_from_json(text)


def test_only_configurations_are_serialized():
    with pytest.raises(TypeError, match="expected an NDPConfig"):
        config_environment(TriggerConfig())


def test_serialized_form_is_plain_json():
    values = json.loads(config_environment(CONFIGS[1])[CONFIG_VARIABLE])
    assert values["sector_bytes"] == 64 and values["trigger"]["filter_entries"] == 4


def test_designs_are_written_once_per_configuration():
    small = NDPConfig(addr_width=16, sector_bytes=8, id_width=4)
    first = memory_port_fifos_verilog(small)
    assert first == memory_port_fifos_verilog(small)
    assert first != memory_port_fifos_verilog(small, depth=2)
    text = first.read_text()
    assert "module memory_port_fifos(" in text and "gpu__req__payload" in text and "mem__resp__ready" in text


def test_time_zero_evaluation_sets_each_modules_register_again_and_changes_nothing_else():
    text = ("module a(x);\n  reg \\$auto$verilog_backend.cc:2355:dump_module$1  = 0;\n  wire x;\nendmodule\n"
            "module b(y);\n  reg \\$auto$verilog_backend.cc:2355:dump_module$2  = 0;\nendmodule\n")
    changed = evaluate_at_time_zero(text)
    assert changed.count("initial #0 \\$auto$verilog_backend.cc:2355:dump_module$") == 2
    assert "initial #0 \\$auto$verilog_backend.cc:2355:dump_module$2  = 1;" in changed
    assert [line for line in changed.splitlines() if not line.strip().startswith("initial")] == \
        text.splitlines()
