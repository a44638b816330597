"""The kernel library on the instruction-set simulator: every kernel bit-exact against its
golden (sim/golden/kernels.py, written from the definitions), on random tensors of a few
sizes including ragged ones; trigger-order (in)dependence as each kernel claims; the
multi-phase ops end to end; per-sector costs measured on the simulator; the registry's
metadata and its errors."""

from types import MappingProxyType

import numpy as np
import pytest

from matndp.host.kernels.catalog import (KERNELS, OPS, Access, DType, LibraryError, Role,
                                         kernel, op, prepare_on_iss, run_on_iss, run_op_on_iss)
from matndp.host.kernels.image import Section
from matndp.host.kernels.memory import Memory
from matndp.host.kernels.inputs import random_inputs
from matndp.sim.golden.kernels import GOLDENS, from_bf16, to_bf16


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
def test_reductions_with_any_number_of_copies(name, partials):
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


def test_ops_cover_the_offload_planners_kernels():
    planner = ["relu_fwd", "relu_bwd", "gelu_fwd", "gelu_bwd", "tanh_fwd", "tanh_bwd",
               "scale_fwd", "scale_bwd", "dropout_fwd", "dropout_bwd", "where_fwd", "where_bwd",
               "add", "batchnorm_fwd", "batchnorm_bwd", "layernorm_fwd", "layernorm_bwd",
               "softmax_fwd", "softmax_bwd", "adam", "sgd_momentum"]
    extra = ["bias_relu", "bn_stats", "bn_apply", "layernorm_apply", "axpy", "adamw"]
    for name in planner + extra:
        assert name in OPS
    for name in OPS:
        for phase in OPS[name].phases:
            assert phase in KERNELS


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


# Registry metadata ---------------------------------------------------------------------------

def test_every_kernel_is_well_formed():
    for name, spec in KERNELS.items():
        sizes = (BF16_SIZES if spec.trigger_spec.dtype is DType.BF16 else SIZES)[spec.dims]
        launch = spec.launch(sizes[0])
        addresses = {t.name: 0x1000 * (i + 1) for i, t in enumerate(spec.tensors)}
        words = launch.arguments(addresses, scratchpad_base=64)
        assert len(words) == 16 and all(0 <= w < 1 << 64 for w in words)
        # every tensor but the trigger (whose sector arrives as DATA) reaches the kernel
        for tensor in spec.tensors:
            if tensor.name != spec.trigger:
                assert addresses[tensor.name] in words, f"{name}: {tensor.name} is not an argument"
        assert spec.image.name == spec.source.removesuffix(".s")
        # atomics are what makes a result depend on the trigger order (a maximum does not)
        assert spec.ordered == (not spec.order_independent or name.startswith("softmax_max"))
        # a kernel that keeps anything in the scratchpad prepares it in its initializer
        assert (launch.scratchpad_bytes > 0) == (Section.INIT in spec.sections)
        # reductions finish in the finalizer, which writes them to memory
        assert (Section.FINAL in spec.sections) == spec.ordered


def test_ordered_comes_from_the_image():
    assert kernel("bn_stats").ordered and kernel("softmax_max").ordered
    assert not kernel("relu_fwd").ordered and not kernel("bn_apply").ordered


def test_a_launch_says_what_to_place_trigger_and_read():
    launch = kernel("adam").launch({"elements": 20}, lr=0.01, step=3)
    assert launch.inputs == ("grad", "param", "exp_avg", "exp_avg_sq")
    assert launch.outputs == ("param", "exp_avg", "exp_avg_sq")
    assert launch.trigger == "grad" and launch.access is Access.WRITE
    assert launch.expected_triggers == 3
    assert launch.allocation("param") == 96          # whole trigger sectors
    assert launch.trigger_accesses() == [(0, (1 << 32) - 1), (32, (1 << 32) - 1), (64, 0xFFFF)]
    assert launch.params["step"] == 3 and launch.params["maximize"] is False
    bn = kernel("bn_apply").launch({"rows": 4, "channels": 16})
    assert bn.access is Access.READ and bn.scratchpad_bytes == 128 and bn.allocation("scale") == 64


def test_any_mapping_sizes_a_launch():
    launch = kernel("bn_apply").launch(MappingProxyType({"rows": 4, "channels": 16}))
    assert launch.allocation("scale") == 64 and launch.expected_triggers == 4 * 16 // 8


def test_padding_of_a_ragged_output_is_untouched():
    launch = kernel("relu_fwd").launch({"elements": 13})
    memory = Memory(256)
    memory.place("y", np.full(16, 7.0, np.float32))
    x = np.arange(13, dtype=np.float32) - 6
    outputs, _ = run_on_iss(launch, {"x": x}, memory=memory)
    assert (outputs["y"] == np.maximum(x, 0)).all()
    assert (memory.tensor("y")[13:] == 7.0).all()


@pytest.mark.parametrize("call, message", [
    (lambda: kernel("relu"), "no library kernel 'relu'"),
    (lambda: op("batchnorm"), "no library op 'batchnorm'"),
    (lambda: kernel("relu_fwd").launch({"rows": 4}), "sized by elements"),
    (lambda: kernel("relu_fwd").launch({"elements": 0}), "elements must be a positive integer"),
    (lambda: kernel("relu_fwd").launch({"elements": 8}, alpha=2.0), "no parameter alpha"),
    (lambda: kernel("bn_stats").launch({"rows": 4, "channels": 12}), "multiple of 8"),
    (lambda: kernel("bn_stats").launch({"rows": 1, "channels": 8}), "at least 2"),
    (lambda: kernel("layernorm_stats").launch({"rows": 3, "columns": 12}), "multiple of 8"),
    (lambda: kernel("dropout_fwd").launch({"elements": 8}, p=1.0), r"p must be in \[0, 1\)"),
    (lambda: kernel("sgd_momentum").launch({"elements": 8}, momentum=0.0), "momentum must be > 0"),
    (lambda: kernel("sgd_momentum").launch({"elements": 8}, nesterov=True, dampening=0.5), "zero dampening"),
    (lambda: kernel("adam").launch({"elements": 8}, step=0), "step must be a positive integer"),
    (lambda: kernel("adam").launch({"elements": 8}, maximize=1), "maximize must be a bool"),
    (lambda: kernel("adam").launch({"elements": 8}, lr=float("nan")), "lr must be a finite number"),
    (lambda: kernel("adam").launch({"elements": 8}, beta2=1.0), "beta2 must be in"),
    (lambda: kernel("softmax_max").launch({"rows": 2, "columns": 64}, partials=3).arguments(
        {"x": 0, "max_rows": 256}), "power-of-two number of copies"),
    (lambda: kernel("relu_fwd").launch({"elements": 8}).arguments({"x": 0}), "no address for tensor 'y'"),
    (lambda: kernel("relu_fwd").launch({"elements": 8}).arguments({"x": 0, "y": 4}), "not sector-aligned"),
    (lambda: kernel("relu_fwd").launch({"elements": 8}).arguments({"x": 0, "y": 32}, 8), "not a sector address"),
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


def test_bf16_tensors_round_trip_through_the_golden_helpers():
    x = np.array([1.0, -2.5, 3.140625, np.inf], dtype=np.float32)
    assert (from_bf16(to_bf16(x)) == x).all()


# docs/kernels.md --------------------------------------------------------------------------

def test_the_docs_name_every_kernel_and_op():
    from tests.paths import DOCS
    text = (DOCS / "kernels.md").read_text()
    for name in list(KERNELS) + list(OPS):
        assert f"`{name}`" in text
