"""``make bench`` ``cosim``: the co-simulation's time — the default block of ``make sim``
(without its waveform window), the planning of the whole iteration at batch 2 and 32, and
the whole iteration at batch 2 as a job per block, one after another and on two worker
processes — with the simulated cycles per second of each, checks included."""

import pathlib
import resource
import tempfile
import time

from matndp.sim.flows.cosim.iteration import share_blocks, share_iteration
from matndp.sim.flows.cosim.run import run_cosim_iteration
from matndp.sim.flows.cosim.share_run import check_runs, run_share
from matndp.sim.flows.cosim.setup import CosimSetup
from matndp.sim.sweep.runners import LocalPool


__all__ = ["bench_cosim", "FULL_ITERATION", "PLANNED_BATCHES"]


# The whole iteration measured: ResNet-50 at batch 2 without tiering stalls (their idle
# cycles would dominate; docs/cosim.md).
FULL_ITERATION = CosimSetup(policy="ideal")
# The batches whose whole iteration is planned (not run) for the planner's time.
PLANNED_BATCHES = (2, 32)


def _cpu_s():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _block(label, setup):
    wall, cpu = time.monotonic(), _cpu_s()
    share = share_iteration(setup)
    planned = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cosim-bench-") as folder:
        run = run_share(share, directory=folder)
        ran = time.monotonic()
        summary = check_runs([run])
    done = time.monotonic()
    cycles = int(run.result.cycles)
    return {"run": label, "setup": setup.as_dict(), "blocks": 1, "cycles": cycles,
            "gpu_port_requests": summary["gpu_requests"], "engine_requests": summary["engine_requests"],
            "launches_bit_exact": summary["launches_bit_exact"],
            "plan_s": round(planned - wall, 3), "run_s": round(ran - planned, 3),
            "check_s": round(done - ran, 3), "wall_s": round(done - wall, 3),
            "cpu_s": round(_cpu_s() - cpu, 3), "cycles_per_wall_s": round(cycles / (done - wall))}


def _planning(batch):
    setup = CosimSetup(batch=batch, policy=FULL_ITERATION.policy)
    wall, cpu = time.monotonic(), time.process_time()
    shares = share_blocks(setup)
    return {"run": f"planning the whole iteration, batch {batch}", "batch": batch, "blocks": len(shares),
            "gpu_port_requests": sum(len(stage) for share in shares for step in share.steps
                                     for stage in step.stages),
            "plan_s": round(time.monotonic() - wall, 3), "plan_cpu_s": round(time.process_time() - cpu, 3)}


def _iteration(setup, workers):
    wall = time.monotonic()
    shares = share_blocks(setup)
    planned = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cosim-bench-") as folder:
        report = run_cosim_iteration(pathlib.Path(folder) / "cosim", shares=shares,
                                     runner=LocalPool(workers) if workers > 1 else None,
                                     progress=lambda line: None, job_progress=lambda *args: None)
    done = time.monotonic()
    checks = report["checks"]
    return {"run": f"whole ResNet-50 iteration, batch {setup.batch}, {setup.policy}, {workers} "
                   f"worker{'s' if workers > 1 else ''}", "setup": setup.as_dict(), "workers": workers,
            "blocks": len(shares), "cycles": report["cycles"], "gpu_port_requests": checks["gpu_requests"],
            "engine_requests": checks["engine_requests"], "launches_bit_exact": checks["launches_bit_exact"],
            "plan_s": round(planned - wall, 3), "wall_s": round(done - wall, 3),
            "cycles_per_wall_s": round(report["cycles"] / (done - wall)),
            "job_wall_s": {job["block"]: job["wall_s"] for job in report["jobs"]}}


def bench_cosim(quick=False):
    """The default block's co-simulation and (unless ``quick``) the planner at batch 2 and
    32 and the whole iteration on one worker and on two."""
    runs = [_block("make sim block (layer1.0, tm at 0.5 of the footprint)", CosimSetup())]
    if not quick:
        runs += [_planning(batch) for batch in PLANNED_BATCHES]
        runs += [_iteration(FULL_ITERATION, workers) for workers in (1, 2)]
    result = {"runs": runs,
              "note": "the harness build is made once before the first run and not timed again"}
    if not quick:
        one, two = runs[-2:]
        result["two_workers_speedup"] = round(one["wall_s"] / two["wall_s"], 3)
    return result
