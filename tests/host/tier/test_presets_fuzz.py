"""Fuzzing the tier set-up file and its overrides (tests/fuzzing.py): TOML set-ups mutated at
random as text and as parsed tables, random bytes, and ``SECTION.KEY=VALUE`` overrides with
random values. Each gives a set-up whose numbers are finite, whose GPU and policy are
registered names, and which round-trips through plain data unchanged, or fails with a
:class:`ConfigError` naming the file (or the override)."""

import dataclasses
import math
import textwrap

import pytest
from hypothesis import strategies as st

from matndp.host.gpu import PRESETS
from matndp.host.tier.config import TierConfig
from matndp.host.tier import presets
from matndp.host.tier.flash import FLASH_PRESETS, FlashConfig
from matndp.host.tier.policies import TIER_POLICIES
from matndp.host.tier.presets import (ConfigError, SETUP_PRESETS, apply_overrides, load_setup,
                                      setup_from_dict, setup_preset)

from tests.fuzzing import (fuzz_tests, json_values, mutated_text, mutated_tree, outcome,
                           random_bytes, read_file, refused, toml_text, words_of)


# The module's documented example: the indented block after "keys are the fields".
_DOCUMENTED = textwrap.dedent(presets.__doc__.split("::\n\n", 1)[1].split("\n\n", 1)[0]) + "\n"
_VALID_DATA = [setup_preset(name).as_dict() for name in SETUP_PRESETS.names] + [
    {"preset": "default", "tier": {"hbm_bytes": 80 * 2**30}, "flash": {"preset": "zssd"},
     "run": {"iterations": 4}}]
_VALID_TEXTS = [_DOCUMENTED] + [toml_text(content) for content in _VALID_DATA]
_KEYS = words_of(("preset", "tier", "flash", "run", "gpu", "iterations", "policy"),
                 SETUP_PRESETS.names, FLASH_PRESETS.names, PRESETS.names, TIER_POLICIES.names,
                 (field.name for field in dataclasses.fields(TierConfig)),
                 (field.name for field in dataclasses.fields(FlashConfig)))
_TOML_WORDS = _KEYS + ("[tier]", "[flash]", "[run]", "[[tier]]", " = ", "inf", "-inf", "nan",
                       "1e308", "1979-05-27", "'''", '"""', "{}", "[1, 2]", "0x10", "true")


def _finite(value):
    return not isinstance(value, float) or math.isfinite(value)


def _check_setup(setup):
    for part in (setup.tier, setup.flash):
        for field in dataclasses.fields(part):
            value = getattr(part, field.name)
            assert _finite(value), (field.name, value)
    assert isinstance(setup.gpu, str) and setup.gpu.lower() in PRESETS, setup.gpu
    assert isinstance(setup.policy, str) and setup.policy in TIER_POLICIES, setup.policy
    assert setup_from_dict(setup.as_dict()) == setup


def _read(content):
    read_file(load_setup, "setup.toml", content, ConfigError, _check_setup)


def check_mutated_tree(content):
    outcome(lambda: setup_from_dict(content, source="fuzzed.toml"), ConfigError,
            names=["fuzzed.toml"], check=_check_setup)


@st.composite
def _overrides(draw):
    sections = {"tier": TierConfig, "flash": FlashConfig}
    section = draw(st.sampled_from(["tier", "flash", "run", "nope", ""]))
    known = [f.name for f in dataclasses.fields(sections[section])] if section in sections \
        else ["gpu", "iterations", "policy", "preset"]
    key = draw(st.sampled_from(known) | st.text(max_size=6))
    value = draw(st.one_of(json_values(_KEYS).map(str), mutated_text(["1", "0.5", "true", '"a100"', "lru"],
                                                                      _TOML_WORDS)))
    return draw(st.sampled_from([f"{section}.{key}={value}", f"{section}.{key} = {value}",
                                 f"{section}{key}{value}"]))


def check_overrides(overrides):
    outcome(lambda: apply_overrides(setup_preset("default"), overrides), ConfigError,
            names=["override"], check=_check_setup)


# The files the command line's fuzz test reads.
FILES = mutated_text(_VALID_TEXTS, _TOML_WORDS) | mutated_tree(_VALID_DATA, _KEYS).map(toml_text) | \
    random_bytes()

test_mutated_text, test_mutated_text_large = fuzz_tests(
    _read, mutated_text(_VALID_TEXTS, _TOML_WORDS), 100)
test_mutated_tree, test_mutated_tree_large = fuzz_tests(
    check_mutated_tree, mutated_tree(_VALID_DATA, _KEYS), 150)
test_random_bytes, test_random_bytes_large = fuzz_tests(_read, random_bytes(), 30)
test_overrides, test_overrides_large = fuzz_tests(
    check_overrides, st.lists(_overrides(), min_size=1, max_size=3), 100)


# What fuzzing found, each kept as a case: (what, the file's text) — each a ConfigError
# naming the file, none a traceback, no set-up that fails only when the run starts.
FINDINGS = [
    ("bytes that are not UTF-8", b"preset = \"g10\"\n\x80"),
    ("an unknown preset", 'preset = "10"\n'),
    ("an unknown flash preset", '[flash]\npreset = "tape"\n'),
    ("a GPU that is no preset", '[run]\ngpu = "None"\n'),
    ("a GPU that is a number", "[run]\ngpu = 5\n"),
    ("an unknown policy", '[run]\npolicy = "fifo"\n'),
    ("an infinite bandwidth", "[tier]\nlink_bytes_per_s = inf\n"),
    ("a NaN fraction", "[tier]\nhbm_fraction = nan\n"),
    ("a NaN cost", "[flash]\ncost_usd_per_gb = nan\n"),
    ("a list for a switch", "[tier]\nlink_duplex = [true, true]\n"),
    ("a key with a line break (found by the large run)", '[tier]\n"\\n" = 1\n'),
]


@pytest.mark.parametrize("what, text", FINDINGS, ids=[what for what, _ in FINDINGS])
def test_finding(tmp_path, what, text):
    refused(load_setup, tmp_path / "setup.toml", text, ConfigError)


@pytest.mark.parametrize("override", ["run.gpu=None", "tier.link_duplex=None",
                                      "flash.preset=tape", "tier.fault_latency_s=-inf"])
def test_finding_in_an_override(override):
    with pytest.raises(ConfigError, match=f"^override: .*{override.split('=')[0].split('.')[1]}"):
        apply_overrides(setup_preset("default"), [override])


def test_finding_a_key_with_a_line_break_stays_on_one_line():
    """Found by the large run: the key was shown as it is, and the command line's one line
    of error became two."""
    for content in ({"tier": {"\n": 1}}, {"\r": {}}):
        with pytest.raises(ConfigError, match="unknown") as error:
            setup_from_dict(content, source="fuzzed.toml")
        assert len(str(error.value).splitlines()) == 1
