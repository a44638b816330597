"""Several slices' shares of the same block or iteration set side by side: per op and for
the whole, the distribution of the slices' cycles and the slowest slice, which bounds the
GPU (an op ends when its last slice ends)."""

import json
import pathlib
import tempfile

import numpy as np

from matndp.sim.flows.cosim.measure import calibration_document, kernel_costs


__all__ = ["SliceMeasures", "slice_spread", "slowest_slice_retime"]


class SliceMeasures:
    """What one slice's share measured: its ``slice`` index, ``cycles`` (the harness run's,
    stalls included), and its ``steps`` and ``ops`` (as
    :func:`~matndp.sim.flows.cosim.measure.share_measures` gives them, of one block or of
    every block one after another)."""

    def __init__(self, index, cycles, steps, ops):
        self.slice, self.cycles, self.steps, self.ops = index, int(cycles), steps, ops

    @classmethod
    def of_results(cls, results):
        """One slice's job results (:func:`~matndp.sim.flows.cosim.shard.run_block_job`,
        every block of it in order) as one."""
        return cls(results[0]["slice"], sum(result["cycles"] for result in results),
                   [step for result in results for step in result["measures"]["steps"]],
                   [op for result in results for op in result["measures"]["ops"]])

    @property
    def busy_cycles(self):
        return sum(step["rtl_cycles"] for step in self.steps)


def _distribution(values, indices):
    values = np.asarray(values, dtype=np.int64)
    slowest = int(np.argmax(values))
    return {"min": int(values.min()), "median": float(np.median(values)), "max": int(values.max()),
            "slowest_slice": int(indices[slowest]), "by_slice": [int(value) for value in values]}


def slice_spread(per_slice, slices):
    """The distribution over ``per_slice`` (:class:`SliceMeasures`, one per slice simulated,
    of the ``slices`` the memory is interleaved over) of each op's RTL cycles (an op a slice
    did not run, holding none of its trigger, counts 0 there) and of the whole's, busy (the
    tiering stalls cut out) and as run; and the sum over the ops of the slowest slice's
    cycles, beside the host model's cycles of the same ops: every op with a step of its own,
    a merged one's (its first stage run with a concurrent op's) included; an op with no
    step of its own, riding on another's, is counted in its carrier's."""
    indices = [measures.slice for measures in per_slice]
    ops, slowest_sum, host_sum = [], 0, 0
    for number, op in enumerate(per_slice[0].ops):
        cycles = [measures.ops[number]["rtl_cycles"] for measures in per_slice]
        if all(value is None for value in cycles):
            continue
        row = {"op": op["op"], "where": op["where"], "host_cycles": op["host_cycles"],
               "measured_as": op["measured_as"],
               "rtl_cycles": _distribution([value or 0 for value in cycles], indices)}
        ops.append(row)
        if op["own_step"]:
            slowest_sum += row["rtl_cycles"]["max"]
            host_sum += op["host_cycles"]
    return {"slices": indices, "of": slices,
            "busy_cycles": _distribution([measures.busy_cycles for measures in per_slice], indices),
            "cycles": _distribution([measures.cycles for measures in per_slice], indices),
            "slowest_per_op_cycles": slowest_sum, "host_cycles": host_sum, "ops": ops}


def slowest_slice_retime(per_slice, ops, calibration, clock_hz, retime):
    """The host model's iteration re-timed (``retime(calibration_path)``, as the report
    re-times it with one slice's measurements) with each op kernel's cost taken from the
    slowest of ``per_slice`` (:func:`~matndp.sim.flows.cosim.measure.kernel_costs`)."""
    kernels = kernel_costs([measures.steps for measures in per_slice], ops, calibration)
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "calibration.json"
        path.write_text(json.dumps(calibration_document({"kernels": kernels}, clock_hz)))
        return {**retime(path), "kernels": kernels}
