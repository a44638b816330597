"""The kernel benchmarks' streams: a stream the trigger's event queue could hold for a good
part is refused before anything runs, so that no stall-free figure comes from the queue."""

import pytest

from matndp.host.kernels.library import KERNELS, kernel
from matndp.hw.config import named_config
from matndp.sim.bench.kernels import (ON_THE_FLY, QUEUES_PER_STREAM, STREAM_CONFIGS, STREAM_SIZES,
                                      on_the_fly, stream_rates)


@pytest.mark.parametrize("config_name", ["default", "channel", "fpga"])
def test_the_measured_streams_are_longer_than_the_queues_hold(config_name):
    queue = named_config(config_name).trigger.event_queue_depth
    problems = list(ON_THE_FLY.items())
    if config_name in STREAM_CONFIGS:
        problems += [(name, STREAM_SIZES[KERNELS[name].dims]) for name in ("add", "bn_stats",
                                                                          "layernorm_stats")]
    for name, problem in problems:
        assert kernel(name).launch(problem).expected_triggers >= QUEUES_PER_STREAM * queue, name


def test_a_stream_the_queue_could_hold_is_refused_before_it_runs():
    with pytest.raises(ValueError, match=r"^128 triggering writes are fewer than 4 times the "
                                         r"event queue of 128 in configuration channel: the queue "
                                         r"would hide the engine's pace$"):
        on_the_fly("bn_stats", {"rows": 64, "channels": 16}, "channel", intervals=(1,))


def test_a_kernel_measured_on_the_streams_runs_long_enough_for_every_configuration(monkeypatch):
    import matndp.sim.bench.kernels as kernels
    monkeypatch.setitem(kernels.STREAM_SIZES, ("rows", "channels"), {"rows": 32, "channels": 16})
    with pytest.raises(ValueError, match=r"^64 triggering writes are fewer than 4 times the "
                                         r"event queue of 32 in configuration default"):
        stream_rates("bn_stats", "default")
