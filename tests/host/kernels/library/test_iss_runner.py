"""Library launches on the instruction-set simulator: what the runner places, leaves alone
and refuses."""

import numpy as np
import pytest

from matndp.host.kernels.library import LibraryError, kernel
from matndp.host.kernels.library.inputs import random_inputs
from matndp.host.kernels.library.iss_runner import prepare_on_iss, run_on_iss, run_op_on_iss
from matndp.host.kernels.memory import Memory


def test_padding_of_a_ragged_output_is_untouched():
    launch = kernel("relu_fwd").launch({"elements": 13})
    memory = Memory(256)
    memory.place("y", np.full(16, 7.0, np.float32))
    x = np.arange(13, dtype=np.float32) - 6
    outputs, _ = run_on_iss(launch, {"x": x}, memory=memory)
    assert (outputs["y"] == np.maximum(x, 0)).all()
    assert (memory.tensor("y")[13:] == 7.0).all()


def test_a_prepared_run_places_every_tensor_and_programs_one_entry():
    launch = kernel("bn_apply").launch({"rows": 4, "channels": 16})
    run = prepare_on_iss(launch, random_inputs(launch, seed=4), order=[3, 1, 0, 2, 7, 6, 5, 4])
    assert set(run.addresses) == {t.name for t in launch.tensors}
    assert len(run.events) == launch.expected_triggers
    assert list(run.events.addr[:2]) == [run.addresses["x"] + 96, run.addresses["x"] + 32]
    assert run.simulator.entries[0].arguments == launch.arguments(run.addresses)


@pytest.mark.parametrize("call, message", [
    (lambda: run_on_iss(kernel("relu_fwd").launch({"elements": 8}), {}), "no values for tensor 'x'"),
    (lambda: run_on_iss(kernel("relu_fwd").launch({"elements": 8}), {"x": np.zeros(7, np.float32)}),
     "must be 8 elements"),
    (lambda: run_on_iss(kernel("relu_fwd").launch({"elements": 16}), {"x": np.zeros(16, np.float32)},
                        order=[0, 0]), "permutation"),
    (lambda: run_op_on_iss("softmax_fwd", {"rows": 1, "columns": 8}, {}, lr=1.0), "no parameter lr"),
])
def test_errors_name_the_problem(call, message):
    with pytest.raises(LibraryError, match=message):
        call()


def test_the_simulated_engine_has_the_launchs_scratchpad_and_no_practical_watchdog():
    """The scratchpad is the launch's, rounded up to whole sectors (one at least); the
    watchdog allows 2^30 instructions, far more than the default 4096."""
    relu = prepare_on_iss(kernel("relu_fwd").launch({"elements": 8}), {"x": np.ones(8, np.float32)})
    assert relu.simulator.scratchpad.size == 32 and relu.simulator.config.watchdog == 1 << 30
    launch = kernel("bn_apply").launch({"rows": 4, "channels": 16})
    run = prepare_on_iss(launch, random_inputs(launch, seed=4))
    assert run.simulator.scratchpad.size == -(-max(launch.scratchpad_bytes, 32) // 32) * 32
