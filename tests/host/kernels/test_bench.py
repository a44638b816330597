"""The instruction-set simulator's benchmark of `make bench`: each benchmark kernel over
2^17 FP32 elements (quick), one µthread per written 32-byte sector."""

import numpy as np
import pytest

from matndp.host.kernels.bench import bench_iss


@pytest.fixture
def runs():
    # Per test, not shared: the mutation run then records each test as reaching the bench.
    return bench_iss(quick=True)["runs"]


def test_every_kernel_runs_one_uthread_per_sector_of_its_input(runs):
    elements = 1 << 17
    assert [run["kernel"] for run in runs] == ["relu", "axpy_clamped", "sum_squares"]
    for run in runs:
        assert run["elements"] == elements
        assert run["uthreads"] == elements // 8          # eight FP32 values per sector
        # No µthread of these kernels reads what another writes, so no batch falls back
        # to running its µthreads one at a time.
        assert run["sequential_batches"] == 0


def test_instruction_counts_are_those_of_the_kernel_texts(runs):
    per_uthread = {run["kernel"]: run["instructions_per_uthread"] for run in runs}
    # relu: vmax and vst.x per sector; axpy_clamped: twelve main instructions; sum_squares:
    # two per sector plus its two-instruction init once (2 / 16384, lost in the rounding).
    assert per_uthread == {"relu": 2.0, "axpy_clamped": 12.0, "sum_squares": 2.0}


def test_rates_follow_from_the_counts_and_the_wall_time(runs):
    for run in runs:
        assert run["wall_s"] > 0
        instructions = run["instructions_per_uthread"] * run["uthreads"]
        assert run["instructions_per_s"] == pytest.approx(instructions / run["wall_s"], rel=0.05)
        assert run["uthreads_per_s"] == pytest.approx(run["uthreads"] / run["wall_s"], rel=0.05)


def test_each_run_places_its_input_as_x_and_the_kernels_output_as_y(monkeypatch):
    """relu over 64 elements drawn from seed 3: the input, x, is the seed's first draw; y,
    the kernel's output, holds max(x, 0); the two fill the memory image."""
    from matndp.host.kernels import bench
    images = []

    class Recorded(bench.Memory):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            images.append(self)
    monkeypatch.setattr(bench, "Memory", Recorded)
    run = bench._run("relu", bench.BENCH_KERNELS["relu"], 64, 3)
    assert (run["uthreads"], run["instructions_per_uthread"]) == (8, 2.0)
    (memory,) = images
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    assert list(memory.regions) == ["x", "y"]
    assert memory.size == 2 * x.nbytes
    assert np.array_equal(memory.tensor("x"), x)
    assert np.array_equal(memory.tensor("y"), np.maximum(x, np.float32(0)))
