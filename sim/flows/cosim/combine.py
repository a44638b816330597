"""The slices' partial reductions combined as the GPU's combine kernel combines them, and
checked.

Each simulated slice's reduction kernels (``bn_stats``, ``bn_bwd_stats``) leave their
statistics over that slice's rows (:data:`~matndp.host.offload.combine.REDUCTIONS` names
them). A slice's job hands back, per reduction launch, those outputs as the RTL wrote
them and as the golden computes them from the launch's inputs; the report combines each
reduction over the simulated slices in slice order (:mod:`matndp.sim.golden.combine`),
once from the RTL's outputs and once from the golden's, and the two must agree bit for
bit. Only the simulated slices are combined: the check is of the combination's arithmetic
and order over them, not of the whole tensor's statistics. Beside it, the host model's
time for the combine kernel over all the GPU's slices
(:func:`~matndp.host.offload.combine.combine_steps`).
"""

import numpy as np

from matndp.host.kernels.library import OPS
from matndp.host.offload.combine import REDUCTIONS, combine_steps, combined_iteration_s
from matndp.host.units import format_seconds
from matndp.sim.batch.check import CheckFailed
from matndp.sim.flows.kernel_run import golden_outputs
from matndp.sim.golden.combine import combine_bn_bwd_stats, combine_bn_stats


__all__ = ["COMBINERS", "reduction_partials", "combine_report", "combine_lines"]


# The reductions a co-simulation runs, and how the GPU combines their outputs:
# (counts of rows per slice, {statistic: the slices' values in slice order}, parameters).
COMBINERS = {
    "bn_stats": lambda counts, values, params: combine_bn_stats(counts, values["mean"], values["invstd"],
                                                                params["eps"]),
    "bn_bwd_stats": lambda counts, values, params: combine_bn_bwd_stats(values["grad_weight"],
                                                                        values["grad_bias"]),
}


def _hex(values):
    return np.ascontiguousarray(values, dtype="<f4").tobytes().hex()


def _floats(text):
    return np.frombuffer(bytes.fromhex(text), dtype="<f4")


def _launch_ops(share, step, stage):
    """The op each of ``stage``'s launches is the kernel of: a sweep's is its step's op; a
    GPU stage's are the riders the slice holds a share of, in the step's order of riders,
    then the NDP steps the overlap merged into it, one launch each, in the order of steps."""
    if stage.kind != "gpu":
        return [step.op] * len(stage.launches)
    merged = [other.op for other in share.steps if other.concurrent_with == step.op]
    riders = iter(step.riders)
    ops = []
    for plan in stage.launches[:len(stage.launches) - len(merged)]:
        for rider in riders:
            if OPS[share.plan.placements[rider].kernel].phases[0] == plan.launch.kernel.name:
                ops.append(rider)
                break
        else:
            raise ValueError(f"{stage.label}: no rider of {step.op} has the kernel of launch "
                             f"{plan.launch.kernel.name}")
    return ops + merged


def reduction_partials(run):
    """Per reduction launch of ``run`` (a :class:`~matndp.sim.flows.cosim.share_run.ShareRun`)
    that :data:`COMBINERS` combines: its ``op``, ``phase``, ``rows``, ``params`` and its
    partial statistics as the RTL wrote them (``rtl``) and as the golden computes them
    (``golden``), each as the hex of its little-endian FP32 values (JSON-able)."""
    share = run.share
    found = []
    for stage in run.stages:
        step = share.steps[stage["step"]]
        launches = stage["stage"].launches
        for op, plan, outputs in zip(_launch_ops(share, step, stage["stage"]), launches, stage["outputs"]):
            phase = plan.launch.kernel.name
            if phase not in COMBINERS:
                continue
            names = REDUCTIONS[phase].partial
            golden = golden_outputs(plan.launch, plan.inputs)
            found.append({"op": op, "phase": phase, "rows": int(plan.launch.problem["rows"]),
                          "params": {name: float(value) for name, value in plan.launch.params.items()},
                          "rtl": {name: _hex(outputs[name]) for name in names},
                          "golden": {name: _hex(golden[name]) for name in names}})
    return found


def _combined(phase, held, source):
    names = REDUCTIONS[phase].partial
    values = {name: [_floats(partial[source][name]) for _, partial in held] for name in names}
    combined = COMBINERS[phase]([partial["rows"] for _, partial in held], values, held[0][1]["params"])
    return {name: np.asarray(value, dtype=np.float32) for name, value in combined.items() if name != "count"}


def combine_report(per_slice, share, ops):
    """The ``combine`` part of a report: ``per_slice`` is (slice index, its
    :func:`reduction_partials`) of every simulated slice; ``share`` gives the host model's
    plan; ``ops`` names the ops the report covers. Each reduction is combined over the
    slices that ran it, in slice order, from the RTL's outputs and from the golden's;
    raises :class:`~matndp.sim.batch.check.CheckFailed` when they differ. With one slice
    there is nothing to combine and nothing is checked."""
    per_slice = sorted(per_slice, key=lambda item: item[0])
    plan = share.plan
    # Over the slices the share's memory is interleaved over (the setup may set fewer than
    # the GPU's).
    every = combine_steps(plan, share.slices)
    host = {(step.op, step.phase): step for step in every}
    covered = set(ops)
    host_steps = [step for step in host.values() if step.op in covered]
    reductions = []
    several = len(per_slice) > 1
    keys = dict.fromkeys((partial["op"], partial["phase"]) for _, partials in per_slice for partial in partials)
    for op, phase in keys:
        held = [(index, partial) for index, partials in per_slice for partial in partials
                if (partial["op"], partial["phase"]) == (op, phase)]
        row = {"op": op, "phase": phase, "slices": [index for index, _ in held],
               "rows": sum(partial["rows"] for _, partial in held),
               "groups": len(_floats(held[0][1]["rtl"][REDUCTIONS[phase].partial[0]])),
               "bit_exact": None, "host": host[op, phase].as_dict() if (op, phase) in host else None}
        if several:
            rtl, golden = _combined(phase, held, "rtl"), _combined(phase, held, "golden")
            differing = sorted(name for name in golden if rtl[name].tobytes() != golden[name].tobytes())
            if differing:
                raise CheckFailed(f"{op} ({phase}): the combined {', '.join(differing)} over slices "
                                  f"{', '.join(str(index) for index, _ in held)} from the RTL's outputs "
                                  f"differ from the golden combine")
            row["bit_exact"] = True
        reductions.append(row)
    return {"slices": [index for index, _ in per_slice], "of": share.slices, "order": "slice order",
            "reductions": reductions,
            "bit_exact": sum(1 for row in reductions if row["bit_exact"]),
            "host_combine_us": sum(step.time_s for step in host_steps) * 1e6,
            "host_combine_steps": len(host_steps),
            "iteration_s": plan.matndp_s, "iteration_s_with_combines": combined_iteration_s(plan, every)}


def combine_lines(combine, shown=12):
    """The report's section on the combination (markdown lines), when there is a reduction."""
    rows = combine["reductions"]
    if not rows:
        return []
    several = len(combine["slices"]) > 1
    lines = ["## Partial reductions across slices", "",
             f"Each slice's reductions cover its own rows; the GPU combines the slices' partials "
             f"in a kernel of its own, in slice order, before the statistics' consumer. The host "
             f"model's combine kernels for these ops ({combine['host_combine_steps']}, over all "
             f"{combine['of']} slices): {combine['host_combine_us']:.1f} µs; every combine of the "
             f"iteration on the path to its consumer makes the planned iteration "
             f"{format_seconds(combine['iteration_s_with_combines'])} (without: "
             f"{format_seconds(combine['iteration_s'])}).", ""]
    if several:
        lines += [f"Combined over the {len(combine['slices'])} simulated slices "
                  f"({', '.join(map(str, combine['slices']))}) from the RTL's outputs and from the "
                  f"golden's: {combine['bit_exact']} of {len(rows)} reductions bit-exact.", ""]
    else:
        lines += ["One slice simulated: nothing to combine, nothing checked.", ""]
    lines += ["| op | phase | groups | rows combined | slices | host combine | bit-exact |",
              "|---|---|---:|---:|---:|---:|---|"]
    for row in rows[:shown]:
        host = f"{row['host']['time_us']:.2f} µs" if row["host"] else "–"
        exact = {True: "yes", None: "–"}[row["bit_exact"]]
        lines.append(f"| {row['op']} | {row['phase']} | {row['groups']} | {row['rows']} | "
                     f"{len(row['slices'])} | {host} | {exact} |")
    if len(rows) > shown:
        lines.append(f"| … {len(rows) - shown} more (`report.json`, `combine`) | | | | | | |")
    return lines + [""]
