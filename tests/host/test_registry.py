"""The registries every list of choices of the host models comes from."""

from dataclasses import dataclass

import pytest

from matndp.host.gpu import PRESETS, get_preset
from matndp.host.offload import OFFLOAD_POLICIES
from matndp.host.registry import Registry
from matndp.host.tier import FLASH_PRESETS, TIER_POLICIES
from matndp.host.zoo import MODELS, OPTIMIZERS, PRECISIONS


@dataclass(frozen=True)
class Thing:
    name: str


def test_items_register_under_their_name_in_order():
    registry = Registry("thing", (Thing("b"), Thing("a")))
    assert registry.names == ("b", "a") and list(registry) == ["b", "a"]
    assert registry.lookup("a") == Thing("a") and registry["b"] == Thing("b")
    assert registry.register(Thing("c")) == Thing("c") and len(registry) == 3


def test_a_mapping_registers_under_its_keys():
    assert Registry("thing", {"x": 1, "y": 2}).lookup("y") == 2


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="thing 'a' is registered twice"):
        Registry("thing", (Thing("a"), Thing("a")))


@pytest.mark.parametrize("name", ["z", None, ["a"]])
def test_an_unknown_name_is_refused_naming_the_known_ones(name):
    registry = Registry("thing", (Thing("a"), Thing("b")), hint="things are letters")
    with pytest.raises(ValueError) as error:
        registry.lookup(name)
    assert str(error.value) == f"unknown thing {name!r}; known: a, b (things are letters)"
    with pytest.raises(KeyError):
        registry[name if isinstance(name, str) else "z"]


@pytest.mark.parametrize("registry, names", [
    (TIER_POLICIES, ("ideal", "lru", "uvm", "deepum", "g10", "flashneuron", "g10_gds_ssd", "g10_gds_full", "tm")),
    (OFFLOAD_POLICIES, ("auto", "all", "none")),
    (PRESETS, ("v100", "a100", "h100", "tpu-v4")),
    (FLASH_PRESETS, ("zssd", "tlc")),
    (MODELS, ("resnet50", "vgg16_bn", "bert-base", "gpt2")),
    (PRECISIONS, ("fp32", "bf16", "fp16")),
    (OPTIMIZERS, ("adamw", "sgd_momentum")),
])
def test_the_host_models_registries(registry, names):
    assert registry.names == names
    for name in names:
        assert registry[name].name == name


def test_gpu_presets_are_found_in_any_letter_case_and_named_as_given_when_unknown():
    assert get_preset("H100") is PRESETS["h100"]
    with pytest.raises(ValueError, match="unknown GPU preset 'P100'; known: v100, a100, h100, tpu-v4"):
        get_preset("P100")
