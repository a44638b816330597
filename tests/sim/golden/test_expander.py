"""The expander's reduction kernels on the instruction-set simulator, against the golden
(the K gradients summed in GPU-index order, then the library optimizer's golden), bit for
bit, for any arrival order of the K GPUs' writes, the arrivals gathered as the trigger's
table gathers them; the optimizer kernels are the reduction with the optimizer's .main;
the launch's layout and checks."""

import random
import re

import numpy as np
import pytest

from matndp.host.kernels.library import LibraryError, kernel as library_kernel, library_source
from matndp.host.kernels.expander import (KERNELS, MAX_GPUS, OPTIMIZERS, SUM_KERNEL, ReductionLaunch,
                                          reduction_image, reduction_source, run_on_iss, sum_source)
from matndp.host.runtime import Gathering
from matndp.hw.config import NDPConfig
from matndp.sim.golden.expander import reduced_gradient, reduction_golden
from matndp.sim.golden.kernels import GOLDENS


def _order(launch, rng):
    """The writes of every GPU interleaved at random, each GPU's in its own address order."""
    sectors = launch.copy_bytes // 32
    turns = [gpu for gpu in range(launch.ports) for _ in range(sectors)]
    rng.shuffle(turns)
    next_sector = [0] * launch.ports
    order = []
    for gpu in turns:
        order.append((gpu, next_sector[gpu]))
        next_sector[gpu] += 1
    return order


PARAMS = {"sum": None, "sgd_momentum": {"step": 2, "weight_decay": 0.01}, "adam": {"step": 3, "weight_decay": 0.1},
          "adamw": {"step": 7}}


@pytest.mark.parametrize("optimizer", KERNELS)
@pytest.mark.parametrize("ports", [2, 3, 4])
def test_bit_exact_for_any_arrival_order(optimizer, ports):
    """Each µthread run to completion before the next (batch 1), and in batches of
    several or of every write."""
    launch = ReductionLaunch(optimizer, 203, ports, PARAMS[optimizer])
    grads, state = launch.random_inputs(ports)
    golden = reduction_golden(launch, grads, state)
    for seed, batch in [(0, 1), (1, None), (2, 1), (3, None), (4, 5)]:
        outputs, result = run_on_iss(launch, grads, state, _order(launch, random.Random(seed)),
                                     batch=batch)
        for name, values in golden.items():
            assert np.array_equal(outputs[name].view(np.uint32), values.view(np.uint32)), name
        assert result.entries[0].completed == launch.expected and not result.errors


@pytest.mark.parametrize("optimizer", ["sum", "adam"])
def test_bit_exact_at_the_most_gpus_the_table_counts(optimizer):
    """More copies than load registers: registers are loaded again as their additions issue."""
    launch = ReductionLaunch(optimizer, 40, MAX_GPUS, PARAMS[optimizer])
    grads, state = launch.random_inputs(5)
    golden = reduction_golden(launch, grads, state)
    outputs, result = run_on_iss(launch, grads, state, _order(launch, random.Random(9)), batch=1)
    for name, values in golden.items():
        assert np.array_equal(outputs[name].view(np.uint32), values.view(np.uint32)), name
    assert result.entries[0].completed == launch.expected and not result.errors


def test_the_copies_lie_a_power_of_two_apart_and_each_sector_is_one_microthread():
    launch = ReductionLaunch("adam", 20, 3, {"step": 1})       # 80 bytes: 3 sectors
    assert (launch.copy_bytes, launch.copy_stride, launch.grad_bytes) == (96, 128, 384)
    assert launch.expected == 3 and launch.gathering(0).slots(NDPConfig()) == 4
    assert launch.gathering(8) == Gathering(3, 7, 8)
    addresses, end = launch.layout(0x1000)
    assert addresses == {"grad": 0x1000, "param": 0x1180, "exp_avg": 0x11e0, "exp_avg_sq": 0x1240}
    assert end == 0x12a0
    assert ReductionLaunch("sum", 8, 2).copy_stride == 32


def test_the_sum_is_in_gpu_index_order():
    # Values whose sum depends on the order: (big + 1) − big = 0 in FP32, big − big + 1 = 1.
    big = np.float32(2.0 ** 25)
    grads = [np.full(8, big, np.float32), np.full(8, 1.0, np.float32),
             np.full(8, -big, np.float32)]
    assert np.all(reduced_gradient(grads) == 0.0)
    launch = ReductionLaunch("sgd_momentum", 8, 3, {"step": 1, "lr": 1.0, "momentum": 0.5})
    state = {"param": np.zeros(8, np.float32), "momentum_buffer": np.zeros(8, np.float32)}
    for order in ([(2, 0), (1, 0), (0, 0)], [(0, 0), (1, 0), (2, 0)], [(1, 0), (2, 0), (0, 0)]):
        outputs, _ = run_on_iss(launch, grads, state, order, batch=1)
        assert np.all(outputs["param"] == 0.0) and np.all(outputs["momentum_buffer"] == 0.0)


def test_the_golden_is_the_library_optimizer_on_the_ordered_sum():
    launch = ReductionLaunch("adam", 16, 4, {"step": 2})
    grads, state = launch.random_inputs(3)
    total = np.float32(grads[0])
    for grad in grads[1:]:
        total = (total + grad).astype(np.float32)
    expected = GOLDENS["adam"]({"grad": total, **state}, dict(launch.optimizer_launch.params))
    golden = reduction_golden(launch, grads, state)
    for name in launch.output_tensors():
        assert np.array_equal(golden[name], expected[name])


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
@pytest.mark.parametrize("ports", [2, 5])
def test_an_optimizer_kernel_is_the_sum_with_the_optimizers_main_in_place_of_its_store(optimizer, ports):
    source = reduction_source(optimizer, ports)
    image = reduction_image(optimizer, ports)
    assert not image.uses_atomics
    # The optimizer's arguments keep their words; the reduction's follow.
    library = library_kernel(optimizer).image.arguments
    assert {name: image.arguments[name] for name in library} == library
    assert [image.arguments[name] for name in ("COPY_LOG2", "COPY_MASK", "COPY")] == \
        list(range(len(library), len(library) + 3))
    assert "SUM" not in image.arguments

    def code(text):
        main = re.split(r"^\.main\b", text, maxsplit=1, flags=re.MULTILINE)[1]
        return [" ".join(line.split(";", 1)[0].split()) for line in main.splitlines()
                if line.split(";", 1)[0].strip()]
    reduction = code(sum_source(ports))
    store = reduction.index("vstm.x [x2 + SUM], v12")
    body = [line.replace("DATA", "v12").replace("OFFSET", "x2")
            for line in code(library_source(f"{optimizer}.s"))]
    assert code(source) == reduction[:store] + body + reduction[store + 1:]
    assert reduction_source(SUM_KERNEL, ports) == sum_source(ports)


@pytest.mark.parametrize("ports", [2, 3, 4])
def test_the_sum_runs_no_loop_and_loads_each_other_copy_once(ports):
    """Each k's straight-line sum: K − 1 loads, K − 1 additions, no branch back."""
    lines = [line.split(";", 1)[0].split() for line in sum_source(ports).split(".main", 1)[1].splitlines()]
    lines = [line for line in lines if line]
    labels = [line[0][:-1] for line in lines if line[0].endswith(":")]
    assert labels == [f"own{ports - 1}", *(f"own{k}" for k in range(ports - 1)), "summed"]
    starts = [n for n, line in enumerate(lines) if line[0].endswith(":")]
    for start, end in zip(starts, starts[1:]):
        ops = [line[0] for line in lines[start + 1:end]]
        assert ops.count("vld") == ports - 1 and ops.count("vadd") == ports - 1
        assert set(ops) <= {"vld", "vadd", "jump"}


def test_launch_errors():
    with pytest.raises(LibraryError, match="no expander kernel for 'sgd'"):
        ReductionLaunch("sgd", 8, 2)
    with pytest.raises(LibraryError, match="no expander kernel"):
        reduction_source("bn_stats", 2)
    for ports in (1, MAX_GPUS + 1, True, 2.0):
        with pytest.raises(LibraryError, match=f"reduces over 2 to {MAX_GPUS} GPUs, not {ports!r}"):
            sum_source(ports)
    with pytest.raises(LibraryError, match="the sum takes no parameters, not lr"):
        ReductionLaunch("sum", 8, 2, {"lr": 0.1})
    with pytest.raises(LibraryError, match="at least 2 GPUs, not 1"):
        ReductionLaunch("adam", 8, 1)
    with pytest.raises(LibraryError, match=f"at most {MAX_GPUS} GPUs, not {MAX_GPUS + 1}"):
        ReductionLaunch("adam", 8, MAX_GPUS + 1)
    with pytest.raises(LibraryError, match="elements must be a positive integer"):
        ReductionLaunch("adam", 0, 2)
    with pytest.raises(LibraryError, match="ports must be a positive integer"):
        ReductionLaunch("adam", 8, 2.0)
    launch = ReductionLaunch("adam", 8, 2)
    with pytest.raises(LibraryError, match="not a sector address"):
        launch.layout(0x1004)
    with pytest.raises(LibraryError, match="a gradient of 8 elements, not 7"):
        launch.sector_writes(np.zeros(7, np.float32))
    with pytest.raises(LibraryError, match="momentum must be > 0"):
        ReductionLaunch("sgd_momentum", 8, 2, {"momentum": 0.0})


def test_an_optimizer_using_a_register_the_reduction_keeps_is_refused(monkeypatch):
    """The check reads the optimizer's assembled .main (its macros expanded): adam's step
    uses v1 … v6, so a reduction keeping v5 live clashes with it."""
    from matndp.host.kernels import expander
    from matndp.hw.engine.isa import OperandType
    monkeypatch.setattr(expander, "_REDUCTION_REGISTERS", {(OperandType.VECTOR, 5)})
    with pytest.raises(ValueError, match="adam's .main uses registers the reduction keeps: v5"):
        reduction_source("adam", 2)
    monkeypatch.setattr(expander, "_REDUCTION_REGISTERS", {(OperandType.VECTOR, 7)})
    assert "adam_step x2, v12, v1, vstm" in reduction_source("adam", 2)
