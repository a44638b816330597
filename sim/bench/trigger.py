"""Benchmark: simulated cycles per second of the trigger's DNN-stream test per simulator, on
the trigger-only slice the test is written for."""

import json
import tempfile
import pathlib

from matndp.sim.designs import TRIGGER_SLICE, ndp_slice_verilog
from matndp.sim.runner import SIMULATORS, run_cocotb


def bench_trigger_stream(quick=False):
    results = {}
    for simulator in SIMULATORS:
        for pressure in ("none", "random"):
            with tempfile.TemporaryDirectory() as directory:
                report = pathlib.Path(directory) / "measurements.json"
                run_cocotb(sources=[ndp_slice_verilog(TRIGGER_SLICE)], toplevel="ndp_slice",
                           test_module="matndp.sim.tb.ndp_slice_tb", simulator=simulator, testcase="dnn_stream",
                           extra_env={"MATNDP_TILES": 1 if quick else 4, "MATNDP_PRESSURE": pressure,
                                      "MATNDP_REPORT": report})
                measured = json.loads(report.read_text())
            results[f"{simulator}/{pressure}"] = {
                "cycles": measured["cycles"], "requests": measured["requests"],
                "wall_s": round(measured["wall_s"], 3), "cycles_per_s": round(measured["cycles_per_s"]),
                "requests_per_cycle": round(measured["requests"] / measured["cycles"], 3),
                "stall_cycles": measured["stall_cycles"],
            }
    return {"testbench": "per-cycle Python drivers (GPU source, response and event sinks, "
                         "memory model), stream-rule monitors on the slice's outputs and the "
                         "stall observer; Verilator built with the runner's defaults",
            "runs": results}
