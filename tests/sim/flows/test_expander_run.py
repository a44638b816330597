"""The expander slice end to end under a simulator: K GPUs on their own ports, each with
its own random back-pressure and, in most runs, its own random order of sectors, one of
them late by thousands of cycles, write their gradients of several tensors; the trigger's
table gathers each sector's K writes and the engine, started by the last, sums them in
GPU-index order and runs the optimizer. The weights and optimizer state must equal the golden (the sum in GPU-index
order, then the library optimizer's golden) bit for bit, the same under every timing
seed; a GPU that stops mid-tensor leaves the others flowing and its tensors' completion
pending; accesses outside every range pass through untouched.

Every test here is slow (``make test-slow``): the expander slice's Verilator build alone
takes minutes. K = 4 under Verilator, K = 2, and short runs under Icarus, K = 2 and 3.
"""

import numpy as np
import pytest

from matndp.host.kernels.expander import ReductionLaunch
from matndp.sim.golden.expander import reduction_golden
from matndp.sim.flows.expander_run import GpuTiming, run_expander_rtl


pytestmark = pytest.mark.xdist_group("expander_slice")

# One tensor per optimizer, the first ragged (its last sector partly written).
TENSORS = (("adam", 203, {"step": 3}), ("sgd_momentum", 64, {"step": 2, "nesterov": True}),
           ("adamw", 72, {"step": 5}))


def _problem(ports, seed=11):
    launches = [ReductionLaunch(optimizer, elements, ports, params)
                for optimizer, elements, params in TENSORS]
    inputs = [launch.random_inputs(seed + 100 * index) for index, launch in enumerate(launches)]
    return launches, [grads for grads, _ in inputs], [state for _, state in inputs]


def _timings(ports, seed, late=3000, shuffled=True):
    """Independent random back-pressure per GPU; GPU 1 starts ``late`` cycles late; each
    GPU's sectors in a random order of its own when ``shuffled``."""
    rng = np.random.default_rng(seed)
    return [GpuTiming(pressure=float(rng.choice([0.1, 0.3, 0.6])),
                      response_pressure=float(rng.choice([0.1, 0.5])),
                      delay=late if port == 1 else int(rng.integers(0, 50)), unrelated=0.2,
                      shuffled=shuffled)
            for port in range(ports)]


def _bits(values):
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def _check_bit_exact(run, launches, grads, states):
    result = run.result
    assert result["error"] is None, result["error"]
    assert result["complete"], result["entries"]
    assert result["stream_rule_violations"] == 0
    assert result["unrelated_mismatches"] == 0
    assert result["gpu_sent"] == result["gpu_offered"]
    for index, launch in enumerate(launches):
        entry = result["entries"][index]
        # Every write is a hit; each sector's last one started a µthread.
        assert entry["hits"] == launch.ports * launch.expected
        assert entry["completed"] == launch.expected and entry["drained"] == 0
        golden = reduction_golden(launch, grads[index], states[index])
        for name, values in golden.items():
            got = run.outputs[index][name]
            differing = np.flatnonzero(_bits(got) != _bits(values))
            assert differing.size == 0, (f"{launch.optimizer} {name}: {differing.size} elements "
                                         f"differ, first at {differing[:4]}")
    # Only gradient writes trigger: the unrelated accesses passed through untouched.
    assert result["event_count"] == sum(launch.ports * launch.expected for launch in launches)


def _memory_traffic(run, launches):
    """The engine's memory accesses per gradient sector: K − 1 reads of the other copies
    and one load and one store of each state tensor per sector of one copy."""
    ports = launches[0].ports
    sectors = sum(launch.copy_bytes // 32 for launch in launches)
    loads = sum(len(launch.input_tensors()) * launch.copy_bytes // 32 for launch in launches)
    stores = sum(len(launch.output_tensors()) * launch.copy_bytes // 32 for launch in launches)
    assert run.result["ndp_reads"] == (ports - 1) * sectors + loads
    assert run.result["ndp_writes"] == stores


# The expander slice's Verilator build takes minutes on its own: its RTL runs are slow tests
# (`make test-slow`); the port merge's unit tests and the kernels on the ISS stay default.
@pytest.mark.slow
def test_reduction_is_bit_exact_and_the_same_under_three_timing_seeds():
    ports = 4
    launches, grads, states = _problem(ports)
    outputs = []
    for seed in (1, 2, 3):
        run = run_expander_rtl(launches, grads, states, gpus=_timings(ports, seed, shuffled=seed != 1),
                               seed=seed, memory_pressure=0.2, reorder=seed == 2)
        _check_bit_exact(run, launches, grads, states)
        _memory_traffic(run, launches)
        # The late GPU's writes came last: the reduction waited for it.
        assert run.result["last_gradient_write_cycle"] - run.result["armed_cycle"] >= 3000
        outputs.append(run.outputs)
    for other in outputs[1:]:
        for index in range(len(launches)):
            for name in outputs[0][index]:
                assert np.array_equal(_bits(other[index][name]), _bits(outputs[0][index][name]))


@pytest.mark.slow
def test_a_gpu_that_stops_mid_tensor_leaves_the_others_flowing_and_the_tensor_pending():
    ports = 4
    launches, grads, states = _problem(ports)
    launches, grads, states = launches[:1], grads[:1], states[:1]
    timings = _timings(ports, 4, late=0, shuffled=False)
    stop = launches[0].copy_bytes // 32 // 2
    timings[2] = GpuTiming(pressure=0.3, response_pressure=0.3, stop=stop)
    run = run_expander_rtl(launches, grads, states, gpus=timings, seed=4)
    result = run.result
    assert result["error"] is None
    assert not result["complete"] and not result["entries"][0]["complete"]
    # Every other GPU sent all it had; the stopped one exactly its share.
    assert result["gpu_sent"] == result["gpu_offered"]
    assert result["gpu_offered"][2] == stop
    assert result["unrelated_mismatches"] == 0 and result["stream_rule_violations"] == 0
    # Every sector all four wrote ran and completed; the tensor waits for the missing ones.
    assert result["entries"][0]["completed"] == stop
    assert result["entries"][0]["hits"] == (ports - 1) * launches[0].expected + stop
    # The sectors all four GPUs wrote were reduced and updated; the others left as they were.
    golden = reduction_golden(launches[0], grads[0], states[0])
    reduced = stop * 8
    for name, values in golden.items():
        got = _bits(run.outputs[0][name])
        assert np.array_equal(got[:reduced], _bits(values)[:reduced])
        assert np.array_equal(got[reduced:], _bits(states[0][name])[reduced:])


@pytest.mark.slow
def test_two_gpus():
    ports = 2
    launches, grads, states = _problem(ports)
    for seed in (5, 6):
        run = run_expander_rtl(launches, grads, states, gpus=_timings(ports, seed), seed=seed,
                               memory_pressure=0.2)
        _check_bit_exact(run, launches, grads, states)
        _memory_traffic(run, launches)


@pytest.mark.slow
@pytest.mark.parametrize("ports", [2, 3])
def test_under_icarus(ports):
    launches, grads, states = _problem(ports)
    launches, grads, states = launches[1:2], grads[1:2], states[1:2]
    run = run_expander_rtl(launches, grads, states, gpus=_timings(ports, 7, late=300), seed=7,
                           simulator="icarus", memory_pressure=0.2)
    _check_bit_exact(run, launches, grads, states)
    _memory_traffic(run, launches)
