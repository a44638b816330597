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
so these runs are marked slow."""

import numpy as np
import pytest

from matndp.host.kernels.expander import ReductionLaunch
from matndp.sim.expander_golden import reduction_golden
from matndp.sim.expander_run import GpuTiming, run_expander_rtl


pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("axi_expander")]

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


def test_two_gpus_over_axi_under_icarus():
    ports = 2
    launches, grads, states = _problem(ports, TENSORS[1:])
    run = run_expander_rtl(launches, grads, states, gpus=_gpus(ports, 7, late=300), seed=7,
                           memory_pressure=0.2, simulator="icarus", top="axi")
    _check(run, launches, grads, states, 300)
