"""The engine components' base: the configuration and their own arguments checked before
the component exists."""

import warnings

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.component import EngineComponent, SubCoreComponent, check_positive


class Part(EngineComponent):
    def __init__(self, config, *, count=1):
        self.config = config
        super().__init__({})

    @classmethod
    def check_arguments(cls, config, *, count=1):
        check_positive("count", count)

    def elaborate(self, platform):
        raise NotImplementedError


class CorePart(SubCoreComponent):
    def __init__(self, config, index=0):
        super().__init__({})

    def elaborate(self, platform):
        raise NotImplementedError


CONFIG = NDPConfig(engine=EngineConfig(sub_cores=3))


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None), EngineConfig(), "default"])
def test_what_is_not_an_engine_config_is_refused(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        Part(config)


@pytest.mark.parametrize("count", [0, -2, True, 2.0, "3"])
def test_a_component_s_own_arguments_are_checked(count):
    with pytest.raises(ValueError, match="count must be a positive integer"):
        Part(CONFIG, count=count)


@pytest.mark.parametrize("index", [-1, 3, True, None])
def test_a_sub_core_part_needs_a_sub_core_index(index):
    with pytest.raises(ValueError, match=r"index must be a sub-core of the 3 \(0..2\)"):
        CorePart(CONFIG, index)


def test_a_refused_component_leaves_nothing_unelaborated_behind():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError):
            Part(CONFIG, count=0)
