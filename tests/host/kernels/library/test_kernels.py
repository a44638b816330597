"""Every library kernel on the instruction-set simulator, bit-exact against its golden
(sim/golden/kernels.py, written from the definitions), on random tensors of a few sizes
including ragged ones; trigger-order (in)dependence as each kernel claims; the multi-phase
ops end to end; per-sector costs measured on the simulator."""

import numpy as np
import pytest

from matndp.host.kernels.library import KERNELS, OPS, DType, kernel, op
from matndp.host.kernels.library.inputs import random_inputs
from matndp.host.kernels.library.iss_runner import prepare_on_iss, run_on_iss, run_op_on_iss
from matndp.sim.golden.kernels import GOLDENS


# Inputs -----------------------------------------------------------------------------------

SIZES = {
    ("elements",): [{"elements": 1}, {"elements": 77}, {"elements": 1037}],
    ("rows", "channels"): [{"rows": 7, "channels": 8}, {"rows": 33, "channels": 24},
                           {"rows": 16, "channels": 64}],
    ("rows", "columns"): [{"rows": 1, "columns": 8}, {"rows": 5, "columns": 24},
                          {"rows": 7, "columns": 64}],
}
BF16_SIZES = {
    ("elements",): [{"elements": 1}, {"elements": 77}, {"elements": 1037}],
    ("rows", "channels"): [{"rows": 7, "channels": 16}, {"rows": 9, "channels": 48},
                           {"rows": 16, "channels": 64}],
    ("rows", "columns"): [{"rows": 1, "columns": 16}, {"rows": 5, "columns": 48},
                          {"rows": 7, "columns": 64}],
}


def _bits(values):
    values = np.asarray(values)
    return values.view(np.uint32) if values.dtype == np.float32 else values.astype(np.uint32)


def assert_bit_exact(got, expected, context):
    assert set(expected) <= set(got), f"{context}: outputs {sorted(got)}, golden {sorted(expected)}"
    for name, values in expected.items():
        values = np.asarray(values)
        want = _bits(values.astype(got[name].dtype) if values.dtype != got[name].dtype else values)
        have = _bits(got[name])
        assert have.shape == want.shape, f"{context}: {name} has {have.shape}, golden {want.shape}"
        bad = np.flatnonzero(have != want)
        assert not bad.size, (f"{context}: {name} differs in {bad.size} of {have.size} elements, "
                              f"first at {bad[0]}: {have[bad[0]]:#x}, golden {want[bad[0]]:#x}")


def golden(launch, inputs, order=None):
    return GOLDENS[launch.kernel.name](inputs, dict(launch.params), dict(launch.problem),
                                       order=order, partials=launch.partials)


def _cases():
    for name, spec in KERNELS.items():
        sizes = (BF16_SIZES if spec.trigger_spec.dtype is DType.BF16 else SIZES)[spec.dims]
        for size in sizes:
            yield pytest.param(name, size, id=f"{name}-{'x'.join(map(str, size.values()))}")


# Bit-exact against the goldens --------------------------------------------------------------

@pytest.mark.parametrize("name, problem", list(_cases()))
def test_kernel_matches_its_golden(name, problem):
    launch = kernel(name).launch(problem)
    inputs = random_inputs(launch, seed=sum(problem.values()))
    outputs, result = run_on_iss(launch, inputs)
    assert result.entries[0].completed == launch.expected_triggers
    assert result.entries[0].finalized and result.race_count == 0
    assert_bit_exact(outputs, golden(launch, inputs), f"{name} {problem}")


OPTIMIZER_SETTINGS = [
    {"step": 1},
    {"step": 7, "weight_decay": 0.01, "maximize": True},
    {"step": 3, "beta1": 0.3, "lr": 0.05},                 # lerp from the end (|1 − beta1| ≥ 0.5)
    {"step": 2, "beta1": 0.5},                             # |1 − beta1| = 0.5: from the end too
]
SGD_SETTINGS = [
    {"step": 1},
    {"step": 4, "weight_decay": 1e-3, "dampening": 0.2},
    {"step": 2, "nesterov": True, "maximize": True, "momentum": 0.5},
]


def _optimizer_cases():
    for name in KERNELS:
        if KERNELS[name].source.startswith(("adam", "sgd")):
            settings = SGD_SETTINGS if name.startswith("sgd") else OPTIMIZER_SETTINGS
            for setting in range(len(settings)):
                yield pytest.param(name, setting, id=f"{name}-{setting}")


@pytest.mark.parametrize("name, setting", list(_optimizer_cases()))
def test_optimizer_settings(name, setting):
    params = (SGD_SETTINGS if name.startswith("sgd") else OPTIMIZER_SETTINGS)[setting]
    launch = kernel(name).launch({"elements": 203}, **params)
    inputs = random_inputs(launch, seed=setting)
    outputs, _ = run_on_iss(launch, inputs)
    assert_bit_exact(outputs, golden(launch, inputs), f"{name} {params}")


@pytest.mark.parametrize("name", ["bn_stats", "layernorm_stats", "softmax_bwd_dot"])
@pytest.mark.parametrize("partials", [1, 2, 4])
def test_reductions_with_any_number_of_partials(name, partials):
    spec = kernel(name)
    problem = SIZES[spec.dims][-1]
    launch = spec.launch(problem, partials=partials)
    inputs = random_inputs(launch, seed=partials)
    outputs, _ = run_on_iss(launch, inputs)
    assert_bit_exact(outputs, golden(launch, inputs), f"{name} K={partials}")


# Trigger order ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(KERNELS))
def test_trigger_order(name):
    """A kernel claiming order independence gives the same bits under other trigger orders;
    every kernel matches its golden evaluated in the order the triggers came."""
    spec = kernel(name)
    sizes = (BF16_SIZES if spec.trigger_spec.dtype is DType.BF16 else SIZES)[spec.dims]
    launch = spec.launch(sizes[1])
    inputs = random_inputs(launch, seed=11)
    reference, _ = run_on_iss(launch, inputs)
    rng = np.random.default_rng(5)
    for _ in range(2):
        order = rng.permutation(launch.expected_triggers)
        outputs, _ = run_on_iss(launch, inputs, order=order)
        if spec.order_independent:
            assert_bit_exact(outputs, reference, f"{name} in another order")
        assert_bit_exact(outputs, golden(launch, inputs, order), f"{name} in order {order[:4]}…")


def test_a_sum_does_depend_on_the_trigger_order():
    """The claim is not vacuous: reordering the triggers of a sum changes some bit."""
    launch = kernel("softmax_bwd_dot").launch({"rows": 4, "columns": 512}, partials=1)
    inputs = random_inputs(launch, seed=3)
    first, _ = run_on_iss(launch, inputs)
    differs = False
    for seed in range(4):
        order = np.random.default_rng(seed).permutation(launch.expected_triggers)
        other, _ = run_on_iss(launch, inputs, order=order)
        differs |= bool((other["dot_rows"].view(np.uint32) != first["dot_rows"].view(np.uint32)).any())
    assert differs


# Multi-phase ops ----------------------------------------------------------------------------

def _op_problem(name):
    spec = op(name)
    dtype = spec.kernels[0].trigger_spec.dtype
    return (BF16_SIZES if dtype is DType.BF16 else SIZES)[spec.kernels[0].dims][1]


@pytest.mark.parametrize("name", [n for n, spec in OPS.items() if len(spec.phases) > 1])
def test_multi_phase_op_end_to_end(name):
    spec = op(name)
    problem = _op_problem(name)
    launches = [phase.launch(problem) for phase in spec.kernels]
    inputs = {}
    for launch in launches:
        for tensor, values in random_inputs(launch, seed=17).items():
            if not launch.kernel.tensor(tensor).internal:
                inputs.setdefault(tensor, values)
    rng = np.random.default_rng(2)
    orders = [rng.permutation(launch.expected_triggers) for launch in launches]
    written, results = run_op_on_iss(name, problem, inputs, orders=orders)
    assert all(result.race_count == 0 for result in results)
    # the goldens chained the same way: each phase sees the earlier phases' outputs
    state = dict(inputs)
    for launch, order in zip(launches, orders):
        state.update(golden(launch, {t: state[t] for t in launch.inputs}, order))
    assert_bit_exact(written, {t: state[t] for t in written}, name)


# Costs measured on the simulator ------------------------------------------------------------

@pytest.mark.parametrize("name", list(KERNELS))
def test_instructions_per_sector_measured(name):
    """The registry's per-sector count (the length of the straight-line .main) is what the
    simulator executes per triggering sector, initializer and finalizer excluded."""
    spec = kernel(name)
    sizes = (BF16_SIZES if spec.trigger_spec.dtype is DType.BF16 else SIZES)[spec.dims]
    launch = spec.launch(sizes[-1])
    run = prepare_on_iss(launch, random_inputs(launch, seed=1), expected=0)   # no finalizer
    events = run.events
    run.simulator.run(events.take(slice(0, 1)))              # the initializer and one sector
    rest = run.simulator.run(events.take(slice(1, None)))
    assert rest.instructions == spec.instructions_per_sector * (len(events) - 1)


def test_counts_stay_within_m2ndp_kernel_bodies():
    """M2NDP's per-packet kernel bodies: ReLU 10, GELU 26, softmax 7 + 18 + 9, layer-norm
    statistics 13–15 and apply 8–14; the data arrives with the trigger here."""
    count = {name: spec.instructions_per_sector for name, spec in KERNELS.items()}
    assert count["relu_fwd"] <= 10 and count["gelu_fwd"] <= 26
    assert count["softmax_max"] <= 7 and count["softmax_expsum"] <= 18 and count["softmax_scale"] <= 9
    assert count["layernorm_stats"] <= 13 and count["layernorm_apply"] <= 14
    assert count["bn_stats"] <= 5
