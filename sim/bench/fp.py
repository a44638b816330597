"""Benchmark: vectors per second through :func:`~matndp.sim.flows.fp_vectors.run_fp_vectors`, per op and
simulator, end to end (operand files, simulator start, golden-free result read-back),
and under Verilator and Icarus the results per simulated cycle (the unit's throughput
in the harness, with and without back-pressure), beside each unit's declared latency and
cycles per result. A small warm-up run first builds the simulation so that build time is
not counted."""

import time

import numpy as np

from matndp.sim.flows.fp_vectors import FP_OPS, run_fp_vectors
from matndp.sim.runner import SimulationFailed
from matndp.sim.golden.fp import random_operands


__all__ = ["bench_fp_vectors"]


# Vectors per measured run: (quick, full).
_COUNTS = {"verilator": (20_000, 200_000), "icarus": (2_000, 20_000), "amaranth": (200, 1_000)}


def bench_fp_vectors(quick=False, ops=None):
    """``{op: {"unit": {latency_cycles, cycles_per_result}, simulator: {back_pressure:
    {vectors, seconds, vectors_per_s, results_per_cycle}}}}`` for ``ops`` (default: all
    of ``FP_OPS``; ``results_per_cycle`` under Verilator and Icarus); an op that fails to
    simulate is reported as such instead of measured."""
    results = {}
    for op in ops or FP_OPS:
        unit = FP_OPS[op].unit
        results[op] = {"unit": {"latency_cycles": getattr(unit, "LATENCY", None),
                                "cycles_per_result": unit.CYCLES_PER_RESULT}}
        for simulator, counts in _COUNTS.items():
            count = counts[0] if quick else counts[1]
            operands = random_operands(op, count, seed=1)
            try:
                run_fp_vectors(op, *(x[:16] for x in operands), simulator=simulator)
            except SimulationFailed as error:
                results[op][simulator] = {"failed": str(error)}
                continue
            entry = {}
            harness = simulator != "amaranth"
            for back_pressure in ("none", "random"):
                started = time.perf_counter()
                result = run_fp_vectors(op, *operands, simulator=simulator,
                                        back_pressure=back_pressure, with_cycles=harness)
                seconds = time.perf_counter() - started
                result, cycles = result if harness else (result, None)
                assert len(result) == count and result.dtype == np.uint32
                entry[back_pressure] = {"vectors": count, "seconds": round(seconds, 3),
                                        "vectors_per_s": round(count / seconds)}
                if harness:
                    entry[back_pressure]["results_per_cycle"] = round(count / cycles, 4)
            results[op][simulator] = entry
    return results
