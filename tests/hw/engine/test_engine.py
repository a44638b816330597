"""The engine alone (:class:`~matndp.hw.engine.engine.Engine`) running library kernels in
Amaranth's simulator, its memory port served by a Python model of the memory image with
random back-pressure, latency and reordering, the events arriving with random pauses.
Every output tensor must equal the instruction-set simulator's bit for bit, and the engine
must execute exactly the instructions the instruction-set simulator does.

The kernels cover the engine's paths: an element-wise kernel (with one and with two
sub-cores), an initializer loading what every µthread reads, a read-triggered kernel,
ordered scratchpad atomics with an initializer and a finalizer, and division and square
root."""

import numpy as np
import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.engine.engine import Engine
from matndp.host.kernels.catalog import kernel, prepare_on_iss, run_on_iss
from matndp.host.kernels.image import Section
from matndp.host.kernels.inputs import random_inputs

from .engine_runner import EngineEntry, run_engine


def engine_config(scratchpad_bytes=256, sub_cores=1):
    scratchpad = 256
    while scratchpad < scratchpad_bytes:
        scratchpad *= 2
    return NDPConfig(trigger=TriggerConfig(filter_entries=2),
                     engine=EngineConfig(sub_cores=sub_cores, slots=8, instruction_words=128,
                                         argument_blocks=2, scratchpad_bytes=scratchpad))


def run_library_kernel(name, problem, *, seed=1, pause=0.3, sub_cores=1):
    """``name`` on ``problem`` through the engine and through the instruction-set
    simulator, on the same inputs: ((engine outputs, run), (ISS outputs, ISS result))."""
    launch = kernel(name).launch(problem)
    inputs = random_inputs(launch, seed)
    iss_outputs, iss_result = run_on_iss(launch, inputs)
    placed = prepare_on_iss(launch, inputs)
    image = launch.kernel.image

    def pc(section):
        return image.sections.get(section)

    entry = EngineEntry(words=image.words, main_pc=pc(Section.MAIN), init_pc=pc(Section.INIT),
                        final_pc=pc(Section.FINAL), ordered=launch.ordered,
                        arguments=launch.arguments(placed.addresses),
                        expected=launch.expected_triggers)
    config = engine_config(launch.scratchpad_bytes, sub_cores)
    run = run_engine(config, entry, placed.memory, placed.events,
                     base=placed.addresses[launch.trigger], seed=seed, pause=pause)
    return (placed.outputs(), run), (iss_outputs, iss_result)


def assert_same_bits(got, expected, what):
    assert set(got) == set(expected), what
    for name, values in expected.items():
        a, b = np.asarray(got[name]), np.asarray(values)
        assert a.dtype == b.dtype and a.shape == b.shape, f"{what}: {name}"
        wrong = np.flatnonzero(a.view(np.uint8) != b.view(np.uint8))
        assert wrong.size == 0, f"{what}: {name} differs in {wrong.size} bytes, first at {wrong[0]}"


CASES = [
    ("relu_fwd", {"elements": 128}, 1),
    ("relu_fwd", {"elements": 128}, 2),
    ("bias_relu", {"rows": 4, "channels": 16}, 1),
    ("softmax_scale", {"rows": 2, "columns": 32}, 1),
    ("bn_stats", {"rows": 8, "channels": 16}, 1),
    ("adam", {"elements": 32}, 1),
]


@pytest.mark.parametrize("name, problem, sub_cores", CASES,
                         ids=[f"{name}-{sub_cores}sub" for name, _, sub_cores in CASES])
def test_library_kernel_matches_the_iss(name, problem, sub_cores):
    (outputs, run), (iss_outputs, iss_result) = run_library_kernel(
        name, problem, seed=len(name), sub_cores=sub_cores)
    assert run.error is None and not run.stopped, f"{name}: {run.error}"
    assert run.complete and run.completed == kernel(name).launch(problem).expected_triggers
    assert_same_bits(outputs, iss_outputs, name)
    assert run.issued == iss_result.instructions


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None), EngineConfig()])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        Engine(config)
