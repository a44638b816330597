"""The expander's FPGA top through cocotbext-axi (testbench: sim/tb/axi_expander_tb.py):
K GPUs, each an ``AxiMaster`` on its own port with its own random pauses on every channel,
one of them thousands of cycles late, write their gradients as AXI bursts; memory is an
``AxiRam`` with pauses on every channel, the registers are programmed through AXI4-Lite.
After completion every GPU reads the updated tensors back through its port: weights and
optimizer state must equal the golden (the sum in GPU-index order, then the library
optimizer's golden) bit for bit, the same under two timing seeds; each GPU's unrelated
accesses, outside every range, pass through untouched; the engine's memory traffic is the
scheme's minimum.

The build of the top (the expander slice with its engine, four AXI ports) takes minutes,
so these runs are marked slow; the default suite checks how the testbench groups a GPU's
writes into bursts and the run's argument errors."""

import random

import numpy as np
import pytest

from matndp.host.kernels.expander import ReductionLaunch
from matndp.sim.golden.expander import reduction_golden
from matndp.sim.flows.expander_run import GpuTiming, run_expander_rtl
from matndp.sim.tb.axi_expander_tb import MAX_BURST_SECTORS, axi_operations


pytestmark = pytest.mark.xdist_group("axi_expander")

SECTOR_BYTES = 32
LATE = 3000
# The first ragged (its last sector's strobes partly clear).
TENSORS = (("adam", 203, {"step": 3}), ("sgd_momentum", 64, {"step": 2, "nesterov": True}))


def _problem(ports, tensors=TENSORS, seed=31):
    launches = [ReductionLaunch(optimizer, elements, ports, params)
                for optimizer, elements, params in tensors]
    inputs = [launch.random_inputs(seed + 100 * index) for index, launch in enumerate(launches)]
    return launches, [grads for grads, _ in inputs], [state for _, state in inputs]


def _gpus(ports, seed, late=LATE):
    rng = np.random.default_rng(seed)
    return [GpuTiming(pressure=float(rng.choice([0.1, 0.3, 0.6])),
                      response_pressure=float(rng.choice([0.1, 0.5])),
                      delay=late if port == 1 else int(rng.integers(0, 50)), unrelated=0.2)
            for port in range(ports)]


def _check(run, launches, grads, states, late):
    result = run.result
    assert result["error"] is None, result["error"]
    assert result["complete"], result["entries"]
    assert result["gpu_sent"] == result["gpu_offered"]
    assert result["gpu_error_responses"] == [0] * len(result["gpu_sent"])
    assert result["mem_read_errors"] == result["mem_write_errors"] == 0
    # Every GPU read the same updated tensors through its port, and memory holds them.
    assert result["gpu_read_back_mismatches"] == 0
    assert result["unrelated_mismatches"] == 0
    # Gradients went as bursts, several sectors each on average.
    sectors = sum(launch.copy_bytes // SECTOR_BYTES for launch in launches)
    assert all(bursts < sectors for bursts in result["gpu_bursts"])
    assert result["last_gradient_write_cycle"] - result["armed_cycle"] >= late
    for index, launch in enumerate(launches):
        entry = result["entries"][index]
        assert entry["hits"] == entry["completed"] == launch.expected and entry["drained"] == 0
        for name, values in reduction_golden(launch, grads[index], states[index]).items():
            got = run.outputs[index][name].view(np.uint32)
            want = np.asarray(values, dtype=np.float32).view(np.uint32)
            differing = np.flatnonzero(got != want)
            assert differing.size == 0, (f"{launch.optimizer} {name}: {differing.size} elements "
                                         f"differ, first at {differing[:4]}")
    # Only gradient writes trigger: the unrelated accesses passed through untouched.
    assert result["event_count"] == sum(launch.expected for launch in launches)
    # The engine read each other copy once and each state tensor once, and stored each
    # output once, per sector of a copy: the scheme's minimum.
    ports = launches[0].ports
    assert result["ndp_reads"] == sum((ports - 1 + len(launch.input_tensors())) *
                                      launch.copy_bytes // SECTOR_BYTES for launch in launches)
    assert result["ndp_writes"] == sum(len(launch.output_tensors()) * launch.copy_bytes //
                                       SECTOR_BYTES for launch in launches)


def _gradient_accesses(launch, grad, base):
    return [{"addr": base + offset, "write": True, "unrelated": False,
             "data": data[::-1].hex(), "mask": mask}
            for offset, data, mask in launch.sector_writes(grad)]


def test_gradient_writes_become_bursts_of_their_bytes_in_order():
    launch = ReductionLaunch("adam", 203, 2, {"step": 1})
    grad = np.arange(203, dtype=np.float32)
    base = 0x4000
    unrelated = {"addr": 0x100, "write": False, "unrelated": True, "data": "0", "mask": 0}
    accesses = _gradient_accesses(launch, grad, base)
    accesses = accesses[:5] + [unrelated] + accesses[5:]
    operations = axi_operations(accesses, SECTOR_BYTES, random.Random(3))
    bursts = [(address, data) for kind, address, data in operations if kind == "gradient"]
    assert [kind for kind, _, _ in operations].count("unrelated_read") == 1
    # The bursts cover the gradient's bytes exactly, in order: the ragged last sector's
    # unwritten bytes are left out, and no burst spans the unrelated access.
    joined = b"".join(bytes(data) for _, data in bursts)
    assert joined == grad.tobytes()
    expected_address = base
    for address, data in bursts:
        assert address == expected_address
        assert 0 < len(data) <= MAX_BURST_SECTORS * SECTOR_BYTES
        expected_address += len(data)
    assert 1 < len(bursts) < len(accesses) - 1
    assert any(address == base + 5 * SECTOR_BYTES for address, _ in bursts)


def test_a_gradient_write_with_holes_in_its_strobes_is_refused():
    access = {"addr": 0x40, "write": True, "unrelated": False, "data": "0", "mask": 0b101}
    with pytest.raises(ValueError, match="enables bytes 0x5, not a run from the sector's first byte"):
        axi_operations([access], SECTOR_BYTES, random.Random(1))


@pytest.mark.parametrize("keywords, message", [
    ({"top": "fpga"}, "top must be one of slice, axi, not 'fpga'"),
    ({"top": "axi", "memory_latency": 20}, "memory_latency and reorder set the slice's memory model"),
    ({"top": "axi", "reorder": True}, "the AXI top's memory \\(AxiRam\\) has neither"),
])
def test_run_arguments_the_axi_top_does_not_take_are_refused(keywords, message):
    launches, grads, states = _problem(2, TENSORS[1:])
    with pytest.raises(ValueError, match=message):
        run_expander_rtl(launches, grads, states, gpus=_gpus(2, 1), **keywords)


@pytest.mark.slow
def test_four_gpus_over_axi_bit_exact_under_two_timing_seeds():
    ports = 4
    launches, grads, states = _problem(ports)
    outputs = []
    for seed in (1, 2):
        run = run_expander_rtl(launches, grads, states, gpus=_gpus(ports, seed), seed=seed,
                               memory_pressure=0.2, top="axi")
        _check(run, launches, grads, states, LATE)
        outputs.append(run.outputs)
    for index, launch in enumerate(launches):
        for name in launch.output_tensors():
            assert np.array_equal(outputs[0][index][name].view(np.uint32),
                                  outputs[1][index][name].view(np.uint32))


@pytest.mark.slow
def test_two_gpus_over_axi_under_icarus():
    ports = 2
    launches, grads, states = _problem(ports, TENSORS[1:])
    run = run_expander_rtl(launches, grads, states, gpus=_gpus(ports, 7, late=300), seed=7,
                           memory_pressure=0.2, simulator="icarus", top="axi")
    _check(run, launches, grads, states, 300)
