"""The same sweep on a local Ray instance gives the same lines as on the local pool."""

import pytest

from matndp.sim.sweep import LocalPool, RayCluster, ResultFile, run_sweep

from .sweeps import gpu_spec, without_timing


ray = pytest.importorskip("ray", reason="ray is not importable; `make setup` installs it")


@pytest.fixture(scope="module")
def local_ray():
    """One Ray instance for the module: starting one costs seconds."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_and_the_local_pool_give_the_same_lines(local_ray, tmp_path):
    on_ray = run_sweep(gpu_spec(), tmp_path / "ray.jsonl", RayCluster("auto"), progress=False,
                       plot=False)
    on_pool = run_sweep(gpu_spec(), tmp_path / "pool.jsonl", LocalPool(2), progress=False,
                        plot=False)
    assert (on_ray.run, on_ray.failed) == (on_pool.run, on_pool.failed) == (8, 2)
    ray_lines = ResultFile(tmp_path / "ray.jsonl").load()
    pool_lines = ResultFile(tmp_path / "pool.jsonl").load()
    assert len(ray_lines) == len(pool_lines) == 8
    assert without_timing(ray_lines) == without_timing(pool_lines)
    # the points ran in Ray's workers, not here
    import os
    assert all(not line["worker"].endswith(f":{os.getpid()}") for line in ray_lines)
    # Ray initialized by the caller stays up for the caller
    assert ray.is_initialized()
    resumed = run_sweep(gpu_spec(), tmp_path / "ray.jsonl", RayCluster("auto"), progress=False,
                        plot=False)
    assert (resumed.run, resumed.skipped) == (0, 8)
