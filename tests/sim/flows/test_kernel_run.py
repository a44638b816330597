"""Library kernels end to end through the RTL (the slice with its engine under a simulator,
driven by the host runtime), against the instruction-set simulator and the independent
numpy goldens, bit for bit.

The default suite runs a few kernels chosen to cover the paths: write- and read-triggered,
an initializer feeding every µthread, ordered scratchpad atomics with a finalizer, many
operands loaded per sector, BF16, two entries at once; each with random back-pressure on
every stream and unrelated GPU traffic mixed in. ``-m slow`` runs the whole library under
Verilator and, smaller, under Icarus.
"""

import types

import numpy as np
import pytest

from matndp.host.kernels.library import KERNELS, kernel
from matndp.host.kernels.library.iss_runner import run_on_iss
from matndp.host.kernels.library.inputs import random_inputs
from matndp.sim.golden.kernels import GOLDENS
from matndp.hw.config import named_config
from matndp.sim.flows.kernel_run import Launch, run_kernel_rtl, run_launches_rtl, scratchpad_bases


pytestmark = pytest.mark.xdist_group("engine_slice")

SIZES = {("elements",): {"elements": 77}, ("rows", "channels"): {"rows": 7, "channels": 16},
         ("rows", "columns"): {"rows": 3, "columns": 32}}


def _problem(name):
    return dict(SIZES[KERNELS[name].dims])


def _bits(values):
    values = np.asarray(values)
    return values.view(np.uint32) if values.dtype == np.float32 else values.view(np.uint16)


def assert_same_bits(got, expected, what):
    assert set(got) >= set(expected), f"{what}: outputs {sorted(got)}, expected {sorted(expected)}"
    for name, values in expected.items():
        a, b = _bits(got[name]), _bits(values)
        assert a.shape == b.shape, f"{what}: {name} has shape {a.shape}, expected {b.shape}"
        wrong = np.flatnonzero(a != b)
        assert wrong.size == 0, (f"{what}: {name} differs in {wrong.size} of {a.size} elements, "
                                 f"first at {wrong[0]}: {a[wrong[0]]:#x} != {b[wrong[0]]:#x}")


def check_run(run, what):
    """The run completed, without error, the GPU got every response, the unrelated reads
    returned what memory held, and the outputs equal the ISS's and the golden's."""
    assert run.error is None, f"{what}: engine error {run.error}"
    assert run.complete, f"{what}: not complete after {run.cycles} cycles"
    measured = run.measurements
    assert measured["gpu_responses"] == measured["gpu_reads"], what
    assert measured["unrelated_read_mismatches"] == 0, what
    assert measured["stream_rule_violations"] == 0, what
    launch = kernel(run.kernel).launch(run.problem)
    assert measured["completed"] == launch.expected_triggers, what
    assert measured["hits"] == launch.expected_triggers, what
    assert measured["drained"] == 0, what
    iss, _ = run_on_iss(launch, run.inputs)
    assert_same_bits(run.outputs, iss, f"{what} against the ISS")
    golden = GOLDENS[run.kernel](run.inputs, dict(launch.params), dict(launch.problem),
                                 partials=launch.partials)
    assert_same_bits(run.outputs, golden, f"{what} against the golden")


# Write-triggered with an initializer; read-triggered with an initializer (its loads must
# pass while the GPU's reads wait for events); ordered atomics and a finalizer; five
# operands per sector; a BF16 read-triggered reduction.
COVERAGE = ["bias_relu", "bn_apply", "bn_stats", "adam", "softmax_expsum_bf16"]


@pytest.mark.parametrize("name", COVERAGE)
def test_kernel_under_back_pressure(name):
    run = run_kernel_rtl(name, _problem(name), seed=5, pressure=0.3, unrelated_per_access=1)
    check_run(run, name)


def test_write_triggered_kernel_with_memory_reordering():
    run = run_kernel_rtl("sgd_momentum", _problem("sgd_momentum"), seed=6, pressure=0.2,
                         reorder=True, unrelated_per_access=2)
    check_run(run, "sgd_momentum, reordering memory")


def test_reduction_is_bit_identical_under_any_timing():
    """The same inputs under three back-pressure and latency patterns: the atomics of an
    entry apply in trigger order, so the sums are identical (and equal the golden's)."""
    name = "layernorm_stats"
    launch = kernel(name).launch(_problem(name))
    inputs = random_inputs(launch, 11)
    outputs = []
    for seed, pressure, latency in [(1, 0.0, 4), (2, 0.4, 30), (3, 0.7, 12)]:
        run = run_kernel_rtl(name, _problem(name), seed=seed, pressure=pressure, inputs=inputs,
                             memory_latency=latency, unrelated_per_access=seed - 1)
        check_run(run, f"{name} seed {seed}")
        outputs.append(run.outputs)
    for other in outputs[1:]:
        assert_same_bits(other, outputs[0], f"{name} between timings")


def test_a_kernel_stopped_by_the_watchdog_leaves_the_gpu_flowing():
    """A watchdog shorter than the initializer: the entry stops with cause WATCHDOG, its
    later events are drained and counted, and every GPU access still completes."""
    name = "bn_apply"
    launch = kernel(name).launch(_problem(name))
    run = run_kernel_rtl(name, _problem(name), seed=7, pressure=0.3, unrelated_per_access=1,
                         watchdog=3)
    assert not run.complete and run.error is not None
    entry, pc, cause = run.error
    assert (entry, cause) == (0, "WATCHDOG")
    measured = run.measurements
    assert measured["completed"] == 0
    assert measured["drained"] == launch.expected_triggers
    assert measured["gpu_responses"] == measured["gpu_reads"] > launch.expected_triggers
    assert measured["unrelated_read_mismatches"] == 0


# The engine slice is about 4 MB of Verilog; Icarus runs it at a few hundred cycles a
# second, so its runs stay out of the default suite.
@pytest.mark.slow
def test_a_short_run_under_icarus():
    run = run_kernel_rtl("relu_fwd", {"elements": 16}, seed=2, pressure=0.3, simulator="icarus")
    check_run(run, "relu_fwd under Icarus")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_library_kernel(name):
    run = run_kernel_rtl(name, _problem(name), seed=3, pressure=0.2, unrelated_per_access=1)
    check_run(run, name)


# The FPGA configuration shares its FMA units and its divider among the lanes (a vector
# passes them in groups) and has four slots and one instruction in flight per µthread: the
# same bits, under back-pressure, on its own build of the slice.
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_library_kernel_on_the_fpga_configuration(name):
    run = run_kernel_rtl(name, _problem(name), seed=8, pressure=0.3, unrelated_per_access=1,
                         config=named_config("fpga"))
    check_run(run, f"{name} on fpga")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_library_kernel_under_icarus(name):
    sizes = {("elements",): {"elements": 16}, ("rows", "channels"): {"rows": 2, "channels": 16},
             ("rows", "columns"): {"rows": 1, "columns": 32}}
    run = run_kernel_rtl(name, sizes[KERNELS[name].dims], seed=4, pressure=0.2,
                         simulator="icarus")
    check_run(run, f"{name} under Icarus")


def test_two_entries_at_once_on_interleaved_writes():
    """bias_relu and bn_stats on two tensors the GPU writes interleaved, one entry each."""
    problem = {"rows": 4, "channels": 16}
    runs = run_launches_rtl([Launch("bias_relu", problem), Launch("bn_stats", problem)],
                            seed=9, pressure=0.3, unrelated_per_access=1)
    assert [run.kernel for run in runs] == ["bias_relu", "bn_stats"]
    for run in runs:
        check_run(run, f"{run.kernel} beside another entry")
    assert runs[0].addresses["y"] < runs[1].addresses["x"]        # tensors apart


@pytest.mark.parametrize("options, message", [
    ({"gpu_interval": 0}, "gpu_interval must be a positive integer of cycles"),
    ({"gpu_interval": True}, "gpu_interval must be a positive integer of cycles"),
    ({"gpu_interval": 2, "pressure": 0.3}, "cannot be combined with random back-pressure"),
    ({"gpu_delay": -1}, "gpu_delay must be a non-negative integer of cycles"),
])
def test_bad_gpu_pace_is_refused_before_anything_runs(options, message):
    with pytest.raises(ValueError, match=message):
        run_launches_rtl([Launch("relu_fwd", {"elements": 16})], **options)


def test_launches_take_sector_aligned_scratchpad_regions_one_after_the_other():
    def needing(size):
        return types.SimpleNamespace(scratchpad_bytes=size)
    fpga = named_config("fpga")                   # 4 096 B of scratchpad, 32-byte sectors
    assert scratchpad_bases([needing(40), needing(0), needing(32), needing(1)], fpga) == \
        [0, 64, 64, 96]
    assert scratchpad_bases([needing(2048), needing(2048)], fpga) == [0, 2048]
    with pytest.raises(ValueError, match="the launches need 4128 B of scratchpad; the "
                                         "engine has 4096 B"):
        scratchpad_bases([needing(2048), needing(2048), needing(1)], fpga)


def test_a_paced_gpu_is_timed_from_the_arming():
    """With the GPU offering one triggering write every 8 cycles from the arming and no
    stall, the last write is taken on its slot of the grid: its cycle, counted from the
    arming, plus the tail is the run's cycles; with a GPU that starts at once, the stall
    before the first write is part of the run's stall cycles."""
    name, problem, interval = "bias_relu", {"rows": 8, "channels": 16}, 8
    packets = kernel(name).launch(problem).expected_triggers
    late = run_kernel_rtl(name, problem, seed=3, gpu_interval=interval, gpu_delay=2000)
    check_run(late, "bias_relu, the GPU starting late")
    measured = late.measurements
    assert measured["stall_cycles"] == 0 and measured["first_write_stall_cycles"] == 0
    # Offers at arming + delay + interval·i (cycles counted from the arming); the last taken
    # in its first cycle.
    last_write = 2000 + interval * (packets - 1)
    assert late.cycles - measured["tail_cycles"] == last_write
    early = run_kernel_rtl(name, problem, seed=3, gpu_interval=interval)
    check_run(early, "bias_relu, the GPU starting at the arming")
    measured = early.measurements
    first_stall = measured["first_write_stall_cycles"]
    assert 0 <= first_stall <= measured["stall_cycles"]
    # A refused offer waits and the next starts on a later slot of the grid: the last write
    # is taken no sooner than every write in its own slot after the first.
    last_write = early.cycles - measured["tail_cycles"]
    assert last_write >= first_stall + interval * (packets - 1)
