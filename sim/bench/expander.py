"""``make bench`` entry ``expander``: the expander slice reducing K GPUs' gradients and
running the optimizer, on the RTL (docs/ndpxnet-rtl.md, "Measurements").

One tensor per optimizer and port count; every GPU writes its copy at full rate from the
arming on, with no back-pressure, memory answering after 20 cycles: the engine and the one
memory port are the bottleneck. Per run, from the testbench's cycle counts:

- sectors reduced per cycle: sectors of one copy (each the sum of K written sectors) over
  the cycles from the first gradient write to the weights being ready (the entry's
  completion, the exact cycle ``irq`` rose);
- cycles from the last gradient write to the weights being ready, and the cycles the
  GPUs were held because the trigger's event queue was full;
- instructions per reduced sector, and the share of the issue bound (one instruction per
  cycle per sub-core) the run reached;
- memory accesses per reduced sector, at the memory port: the K gradient writes, the K − 1
  loads of the other copies by the sector's last arrival, and the optimizer's loads and
  stores of its weights and state, against the minimum of the scheme (the same count: no
  sector is read twice, nothing is written but the new weights and state);
- the two bounds on the cycles per reduced sector, and the share of each the run reached:
  the memory bound (the scheme's minimum accesses at the port's one per cycle) and the
  issue bound (the instructions at one per cycle per sub-core). The larger one bounds the
  rate.

The bench measures; it never asserts a speed. The outputs are checked against the golden
(a wrong result is not a measurement). It writes the expander calibration file the host
model's NDPXNet prices the expander from (``build/calibration/ndp_expander.json``,
:func:`matndp.host.calibration.load_expander_calibration`).
"""

import json
import pathlib

import numpy as np

from matndp.host.calibration import (DEFAULT_EXPANDER_PATH, configuration_record,
                                     expander_calibration_document)
from matndp.host.kernels.expander import ReductionLaunch
from matndp.sim.designs import EXPANDER_CONFIG
from matndp.sim.golden.expander import reduction_golden
from matndp.sim.flows.expander_run import GpuTiming, run_expander_rtl


__all__ = ["bench_expander", "calibration_document", "BENCH_ELEMENTS"]


BENCH_ELEMENTS = 2048                 # 256 sectors per copy
_PARAMS = {"sgd_momentum": {"step": 2}, "adam": {"step": 2}}


def _measure(optimizer, ports, elements, seed=1):
    launch = ReductionLaunch(optimizer, elements, ports, _PARAMS[optimizer])
    grads, state = launch.random_inputs(seed)
    run = run_expander_rtl([launch], [grads], [state], gpus=[GpuTiming() for _ in range(ports)],
                           seed=seed)
    result = run.result
    if result["error"] is not None or not result["complete"]:
        raise RuntimeError(f"expander {optimizer} K={ports}: the run did not complete "
                           f"({result['error']})")
    golden = reduction_golden(launch, grads, state)
    for name, values in golden.items():
        if not np.array_equal(run.outputs[0][name].view(np.uint32), values.view(np.uint32)):
            raise RuntimeError(f"expander {optimizer} K={ports}: {name} differs from the golden")
    sectors = launch.copy_bytes // 32
    done = result["entries"][0]["done_cycle"]
    busy = done - result["first_gradient_write_cycle"]
    accesses = result["gpu_memory_requests"] + result["ndp_reads"] + result["ndp_writes"]
    state_accesses = (len(launch.input_tensors()) + len(launch.output_tensors())) * sectors
    minimum = ports * sectors + (ports - 1) * sectors + state_accesses
    cycles_per_sector = busy / sectors
    issue_bound = result["instructions"] / EXPANDER_CONFIG.engine.sub_cores / sectors
    memory_bound = minimum / sectors
    return {
        "optimizer": optimizer, "ports": ports, "sectors_per_copy": sectors,
        "gradient_writes": ports * sectors,
        "cycles_first_write_to_ready": busy,
        "cycles_last_write_to_ready": done - result["last_gradient_write_cycle"],
        # Cycles the GPUs' requests were held because the trigger's event queue was full.
        "gpu_stall_cycles": result["stall_cycles"],
        "sectors_reduced_per_cycle": sectors / busy,
        "gradient_writes_per_cycle": ports * sectors / busy,
        "memory_accesses_per_reduced_sector": accesses / sectors,
        "minimum_accesses_per_reduced_sector": minimum / sectors,
        "gradient_reads_per_reduced_sector": (result["ndp_reads"] - len(launch.input_tensors()) * sectors) / sectors,
        "cycles_per_reduced_sector": cycles_per_sector,
        # The engine issues one instruction per cycle per sub-core: the issue bound.
        "instructions_per_reduced_sector": result["instructions"] / sectors,
        "issue_bound_cycles_per_reduced_sector": issue_bound,
        "issue_bound_share": issue_bound / cycles_per_sector,
        # The memory port takes one access per cycle: the memory bound.
        "memory_bound_cycles_per_reduced_sector": memory_bound,
        "memory_bound_share": memory_bound / cycles_per_sector,
        "memory_port": _port_use(result["memory_requests"], result["first_gradient_write_cycle"],
                                 result["last_gradient_write_cycle"], done),
    }


def _port_use(requests, first_write, last_write, done):
    """The memory port's accesses, the GPUs' and the engine's, while the GPUs write (from
    their first gradient write to their last) and in the tail after it (to the weights
    being ready): where its idle cycles are. The windows are of the GPU ports' cycles; a
    write reaches the memory port a cycle or more after its GPU port took it, so the tail
    holds the last one or few."""
    use = {}
    for window, (start, end) in {"while_the_gpus_write": (first_write, last_write + 1),
                                 "tail": (last_write + 1, done + 1)}.items():
        sources = [from_engine for cycle, from_engine in requests if start <= cycle < end]
        use[window] = {"cycles": end - start, "gpu_accesses": sources.count(0),
                       "engine_accesses": sources.count(1),
                       "busy_share": round(len(sources) / max(end - start, 1), 4)}
    return use


def calibration_document(runs):
    """The expander calibration file's contents from the bench's ``runs``, with each
    point's minimum memory accesses (the scheme's) beside its measured ones."""
    points = {}
    for run in runs:
        points.setdefault(run["optimizer"], {})[run["ports"]] = (
            round(run["cycles_per_reduced_sector"], 3), run["memory_accesses_per_reduced_sector"])
    document = expander_calibration_document(
        points, source="matndp bench expander: RTL runs of the expander slice",
        ndp_config=configuration_record(EXPANDER_CONFIG),
        elements=BENCH_ELEMENTS, memory_latency=20)
    for run in runs:
        document["reduction"][run["optimizer"]][str(run["ports"])][
            "minimum_accesses_per_reduced_sector"] = run["minimum_accesses_per_reduced_sector"]
    return document


def bench_expander(quick=False, calibration=DEFAULT_EXPANDER_PATH):
    """Runs per (optimizer, K): see the module docstring. Writes the calibration file."""
    ports_list = (4,) if quick else (2, 4)
    optimizers = ("adam",) if quick else ("sgd_momentum", "adam")
    runs = [_measure(optimizer, ports, BENCH_ELEMENTS)
            for ports in ports_list for optimizer in optimizers]
    document = calibration_document(runs)
    path = pathlib.Path(calibration)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
    return {
        "elements": BENCH_ELEMENTS, "memory_latency": 20, "runs": runs,
        "calibration_file": str(path),
        # Per reduced sector, what the host model of the expander prices: the cycles the
        # engine takes for a sector of K contributions with its optimizer step.
        "calibration": document["reduction"],
    }
