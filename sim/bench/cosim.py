"""``make bench`` ``cosim``: the co-simulation's time — the default block of ``make sim``
(without its waveform window) and the whole iteration block by block — with the simulated
cycles per second of each, checks included."""

import resource
import tempfile
import time

from matndp.sim.flows.cosim.iteration import share_blocks, share_iteration
from matndp.sim.flows.cosim.share_run import check_runs, run_share, run_shares
from matndp.sim.flows.cosim.setup import CosimSetup


__all__ = ["bench_cosim", "FULL_ITERATION"]


# The whole iteration measured: ResNet-50 at batch 2 without tiering stalls (their idle
# cycles would dominate; docs/cosim.md).
FULL_ITERATION = CosimSetup(policy="ideal")


def _cpu_s():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed(label, setup, whole):
    wall, cpu = time.monotonic(), _cpu_s()
    shares = share_blocks(setup) if whole else [share_iteration(setup)]
    planned = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cosim-bench-") as folder:
        runs = run_shares(shares, directory=folder) if whole else [run_share(shares[0], directory=folder)]
        ran = time.monotonic()
        summary = check_runs(runs)
    done = time.monotonic()
    cycles = int(runs[0].result.cycles)
    return {"run": label, "setup": setup.as_dict(), "blocks": len(shares), "cycles": cycles,
            "gpu_port_requests": summary["gpu_requests"], "engine_requests": summary["engine_requests"],
            "launches_bit_exact": summary["launches_bit_exact"],
            "plan_s": round(planned - wall, 3), "run_s": round(ran - planned, 3),
            "check_s": round(done - ran, 3), "wall_s": round(done - wall, 3),
            "cpu_s": round(_cpu_s() - cpu, 3), "cycles_per_wall_s": round(cycles / (done - wall))}


def bench_cosim(quick=False):
    """The default block's co-simulation and (unless ``quick``) the whole iteration."""
    runs = [_timed("make sim block (layer1.0, tm at 0.5 of the footprint)", CosimSetup(), whole=False)]
    if not quick:
        runs.append(_timed("whole ResNet-50 iteration, batch 2, ideal", FULL_ITERATION, whole=True))
    return {"runs": runs,
            "note": "the harness build is made once before the first run and not timed again"}
