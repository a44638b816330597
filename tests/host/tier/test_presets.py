"""Tier setups: the presets, the TOML file, overrides, and every constructor error."""

import re

import pytest

from matndp.host.tier import TierConfig
from matndp.host.tier.flash import flash_preset
from matndp.host.tier.presets import (GIB, ConfigError, TierSetup, apply_overrides, load_setup,
                                      setup_from_dict, setup_preset)
from matndp.host.tier.run import run_tier

from .graphs import PAGE, return_graph


def test_the_g10_preset_is_g10s_published_setup():
    setup = setup_preset("g10")
    tier, flash = setup.tier, setup.flash
    assert (tier.hbm_bytes, tier.host_bytes) == (40 * 2**30, 128 * 2**30)
    # Bandwidths in G10's units (GB/s = 10**9 B/s); its batcher moves 10 SSD pages per
    # 50-page PCIe batch each way, so the SSD reads and writes 3.15 GB/s at once.
    assert tier.link_bytes_per_s == 15.754e9 and tier.link_duplex
    assert (tier.fault_latency_s, tier.fault_batch_pages, tier.page_bytes) == (45e-6, 50, 4096)
    assert flash.read_bytes_per_s == pytest.approx(15.754e9 * 10 / 50)
    assert flash.program_bytes_per_s == pytest.approx(15.754e9 * 10 / 50)
    assert flash.duplex
    assert (flash.read_latency_s, flash.program_latency_s) == (12e-6, 16e-6)


def test_the_default_preset_is_the_two_tier_model():
    setup = setup_preset("default")
    assert setup.tier == TierConfig(hbm_fraction=0.5) and setup.tier.host_bytes == 0
    assert setup.flash.name == "zssd" and (setup.gpu, setup.policy) == ("a100", "tm")


def test_a_setup_round_trips_through_plain_data():
    for name in ("default", "g10"):
        setup = setup_preset(name)
        assert setup_from_dict(setup.as_dict()) == setup


def test_a_toml_file_sets_any_parameter(tmp_path):
    path = tmp_path / "setup.toml"
    path.write_text('preset = "g10"\n[tier]\nhost_bytes = 64e9\nlink_duplex = false\n'
                    'hbm_fraction = 0.25\n[flash]\npreset = "tlc"\ndevices = 4\n'
                    '[run]\npolicy = "lru"\ngpu = "h100"\n')
    setup = load_setup(path)
    assert setup.tier.host_bytes == 64_000_000_000 and not setup.tier.link_duplex
    assert (setup.tier.hbm_fraction, setup.tier.hbm_bytes) == (0.25, None)
    assert (setup.flash.name, setup.flash.devices) == ("tlc", 4)
    assert (setup.policy, setup.gpu, setup.tier.fault_batch_pages) == ("lru", "h100", 50)
    assert load_setup(path, preset="default").tier.fault_batch_pages == 50
    assert load_setup(path, preset="default").tier.link_bytes_per_s == 31.5e9


def test_overrides_apply_last():
    setup = apply_overrides(setup_preset("g10"), ["tier.fault_batch_pages=10",
                                                  'run.policy="g10"', "flash.preset=zssd"])
    assert (setup.tier.fault_batch_pages, setup.policy, setup.flash.name) == (10, "g10", "zssd")


@pytest.mark.parametrize("content, message", [
    ({"tier": {"hbm_gb": 4}}, "unknown key tier.hbm_gb"),
    ({"memory": {}}, "unknown section(s) memory"),
    ({"preset": "h100"}, "unknown tier preset 'h100'"),
    ({"tier": {"host_bytes": -1}}, "host_bytes must be an integer >= 0"),
    ({"tier": {"host_bytes": 1.5}}, "tier.host_bytes must be an integer"),
    ({"tier": {"hbm_bytes": 1e9 + 0.5}}, "configuration: tier: HBM capacity must be a whole number "
                                         "of bytes, got 1000000000.5"),
    ({"tier": {"link_duplex": 1}}, "tier.link_duplex must be true or false"),
    ({"tier": {"fault_batch_pages": 0}}, "fault_batch_pages must be an integer >= 1"),
    ({"tier": {"host_bytes_per_s": 0}}, "host_bytes_per_s must be positive"),
    ({"tier": {"host_latency_s": -1e-6}}, "host_latency_s must not be negative"),
    ({"flash": {"channels": 0}}, "channels must be a positive integer"),
    ({"flash": {"preset": "qlc"}}, "unknown flash preset 'qlc'"),
    ({"run": {"iterations": 0}}, "iterations must be an integer >= 1"),
    ({"run": {"seed": 1}}, "unknown key run.seed"),
    ({"tier": 3}, "[tier] must be a table"),
])
def test_bad_configurations_name_the_problem(content, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        setup_from_dict(content)


@pytest.mark.parametrize("override, message", [
    ("tier.host_bytes", "expected SECTION.KEY=VALUE"),
    ("host_bytes=3", "expected SECTION.KEY=VALUE"),
    ("disk.size=3", "unknown section 'disk'"),
    ("tier.size=3", "unknown key tier.size"),
])
def test_bad_overrides_name_the_problem(override, message):
    with pytest.raises(ConfigError, match=message):
        apply_overrides(setup_preset("default"), [override])


def test_a_bad_file_is_named(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[tier\n")
    with pytest.raises(ConfigError, match="bad.toml: not TOML"):
        load_setup(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_setup(tmp_path / "absent.toml")


def test_run_tier_takes_plain_data_and_echoes_the_configuration():
    config = {"preset": "default", "tier": {"hbm_bytes": 150 * PAGE, "host_bytes": 30 * PAGE},
              "run": {"policy": "lru"}}
    metrics = run_tier(config, return_graph())
    assert metrics["config"] == setup_from_dict(config).as_dict()
    assert metrics["config"]["tier"]["host_bytes"] == 30 * PAGE
    assert (metrics["policy"], metrics["faults"], metrics["workload"]) == ("lru", 71, "return")
    assert metrics == run_tier(setup_from_dict(config), return_graph())


def test_a_setup_refuses_bad_iterations():
    with pytest.raises(ValueError, match="iterations must be an integer >= 1"):
        TierSetup("x", TierConfig(hbm_fraction=1.0), setup_preset("default").flash, iterations=0)
    assert GIB == 2**30


@pytest.mark.parametrize("content, message", [
    (3, "configuration: expected a table of sections"),
    ({"memory": {}, "disk": {}},
     "configuration: unknown section(s) disk, memory (known: preset, tier, flash, run)"),
    ({"run": {"seed": 1}}, "configuration: unknown key run.seed (known: gpu, iterations, policy)"),
    ({"flash": {"channels": 2.5}}, "configuration: flash.channels must be an integer, got 2.5"),
    ({"flash": {"duplex": 1}}, "configuration: flash.duplex must be true or false, got 1"),
    ({"tier": {"link_bytes_per_s": float("inf")}},
     "configuration: tier.link_bytes_per_s must be a finite number, got inf"),
    ({"tier": {"page_bytes": float("nan")}},
     "configuration: tier.page_bytes must be a finite number, got nan"),
    ({"run": {"gpu": "x100"}},
     "configuration: run.gpu: unknown GPU preset 'x100'; known: v100, a100, h100, tpu-v4"),
    ({"run": {"policy": "fifo"}}, "configuration: run.policy: unknown policy 'fifo'"),
    ({"run": {"policy": 3}}, "configuration: run.policy: unknown policy 3"),
])
def test_each_configuration_refusal_names_the_source_key_and_value(content, message):
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}"):
        setup_from_dict(content)


def test_whole_numbers_written_as_floats_become_integers_in_every_section():
    setup = setup_from_dict({"tier": {"host_bytes": 128e9, "fault_batch_pages": 10.0},
                             "flash": {"channels": 16.0, "devices": 2.0}})
    assert setup.tier.host_bytes == 128 * 10**9 and type(setup.tier.host_bytes) is int
    assert type(setup.tier.fault_batch_pages) is int
    assert (setup.flash.channels, setup.flash.devices) == (16, 2)
    assert type(setup.flash.channels) is int and type(setup.flash.devices) is int


def test_an_absolute_capacity_replaces_the_presets_fraction_and_back():
    by_bytes = setup_from_dict({"tier": {"hbm_bytes": 8 * PAGE}})      # the default: a fraction
    assert (by_bytes.tier.hbm_bytes, by_bytes.tier.hbm_fraction) == (8 * PAGE, None)
    by_share = setup_from_dict({"preset": "g10", "tier": {"hbm_fraction": 0.3}})
    assert (by_share.tier.hbm_bytes, by_share.tier.hbm_fraction) == (None, 0.3)


def test_a_flash_preset_keeps_the_device_count_and_applies_before_other_keys():
    setup = setup_from_dict({"flash": {"devices": 3}})
    switched = apply_overrides(setup, ["flash.preset=tlc", "flash.channels=4"])
    assert (switched.flash.name, switched.flash.devices, switched.flash.channels) == ("tlc", 3, 4)
    assert switched.flash.page_bytes == flash_preset("tlc").page_bytes


@pytest.mark.parametrize("override, message", [
    ("disk.size=3", "override 'disk.size=3': unknown section 'disk' (known: tier, flash, run)"),
    ("run.seed=3", "override 'run.seed=3': unknown key run.seed (known: gpu, iterations, policy)"),
    ("tier.host_bytes=-1", "override: tier: host_bytes must be an integer >= 0, got -1"),
])
def test_each_override_refusal_is_one_whole_message(override, message):
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        apply_overrides(setup_preset("default"), [override])


def test_a_file_refusal_names_the_file(tmp_path):
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match=f"^{re.escape(str(binary))}: not a UTF-8 text file$"):
        load_setup(binary)
    bad = tmp_path / "bad.toml"
    bad.write_text("[tier]\nhbm_gb = 4\n")
    with pytest.raises(ConfigError, match=f"^{re.escape(str(bad))}: unknown key tier.hbm_gb"):
        load_setup(bad)


def test_a_preset_given_beside_a_file_replaces_the_files_own(tmp_path):
    path = tmp_path / "setup.toml"
    path.write_text('preset = "default"\n[run]\npolicy = "lru"\n')
    setup = load_setup(path, preset="g10")
    assert (setup.name, setup.policy, setup.tier.host_demotes) == ("g10", "lru", False)
    assert load_setup(path).name == "default"
