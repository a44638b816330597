"""The combination of the NDP slices' partial reductions, on the GPU.

The GPU's memory is interleaved over its N slices, so a reduction kernel on the NDP (a
batch-norm's statistics, a layer norm's or a softmax's row reductions) leaves on every
slice a *partial*: its statistics over the rows, or the parts of rows, that slice holds.
Before the op that consumes the statistics (the apply phase on every slice) the GPU runs
a small combine kernel: it reads the N slices' partials (groups × N × a few FP32 values),
combines them in slice order, and writes the combined statistics once, where the apply
phase reads them. The slices need nothing of each other, and the GPU only one launch
(docs/cosim.md, "Partial reductions across slices").

Its time: the GPU's launch overhead plus the bytes read and written at the DRAM bandwidth
GPU kernels can draw. The consumer waits for it, so it lies on the path between the
reduction and its apply phase: :func:`combined_iteration_s` adds every combine to the
planned iteration (the schedule itself is not re-run).
"""

from dataclasses import dataclass
from math import ceil, prod

from ..graph import DTYPE_BYTES
from ..kernels.library import OPS, SECTOR_BYTES


__all__ = ["Reduction", "REDUCTIONS", "CombineStep", "combine_step", "combine_steps",
           "combined_iteration_s", "PARTIAL_BYTES"]


PARTIAL_BYTES = 4          # a partial statistic is one FP32 value per group


@dataclass(frozen=True)
class Reduction:
    """A reduction kernel's partials: its ``groups`` (``"channels"``: one per channel of a
    rows × channels tensor, every slice holding whole rows; ``"rows"``: one per row of
    length L, its sectors dealt over consecutive slices), the ``partial`` statistics a
    slice leaves per group, and ``combined_floats``, the FP32 values per group the combine
    writes for the consumer."""
    groups: str
    partial: tuple
    combined_floats: int


# Per reduction phase of the library's ops. The batch-norm's are the outputs the slices'
# finalizers write (mean and invstd are combined with each slice's count of rows, Chan's
# formula; grad_weight and grad_bias are sums over rows); the row reductions' are their
# raw sums and maxima.
REDUCTIONS = {
    "bn_stats": Reduction("channels", ("mean", "invstd"), 6),     # + scale, shift, running stats
    "bn_bwd_stats": Reduction("channels", ("grad_weight", "grad_bias"), 5),  # + coef_a, b, c
    "layernorm_stats": Reduction("rows", ("sum", "sum_of_squares"), 2 + 16),  # mean, rstd, row_coefs
    "layernorm_bwd_stats": Reduction("rows", ("dot", "sum"), 32),            # row_coefs: a, b, c, m
    "softmax_max": Reduction("rows", ("max",), 8),                          # max_rows
    "softmax_expsum": Reduction("rows", ("sum",), 8),                       # inv_rows
    "softmax_bwd_dot": Reduction("rows", ("dot",), 8),                      # dot_rows
}


@dataclass(frozen=True)
class CombineStep:
    """The combine of ``op``'s reduction phase ``phase`` on the GPU: ``groups`` reduced,
    each over ``holders`` slices' partials; ``read_bytes`` and ``written_bytes``;
    ``time_s``, launch included."""
    op: str
    phase: str
    groups: int
    holders: int
    read_bytes: int
    written_bytes: int
    time_s: float

    def as_dict(self):
        return {"op": self.op, "phase": self.phase, "groups": self.groups, "holders": self.holders,
                "read_bytes": self.read_bytes, "written_bytes": self.written_bytes,
                "time_us": self.time_s * 1e6}


def _groups_and_holders(reduction, tensor, slices):
    elements = prod(tensor.shape)
    if reduction.groups == "channels":
        if len(tensor.shape) != 4:
            raise ValueError(f"a per-channel reduction's tensor is N x C x H x W, not {tensor.shape}")
        channels = tensor.shape[1]
        return channels, min(slices, elements // channels)
    length = tensor.shape[-1]
    row_sectors = ceil(length * DTYPE_BYTES[tensor.dtype] / SECTOR_BYTES)
    return elements // length, min(slices, row_sectors)


def combine_step(op, phase, tensor, slices, launch_overhead_s, bandwidth_bps):
    """The :class:`CombineStep` of reduction ``phase`` (a key of :data:`REDUCTIONS`) of op
    ``op`` over ``tensor`` (its trigger, a :class:`~matndp.host.graph.Tensor`) dealt over
    ``slices`` slices, on a GPU of ``launch_overhead_s`` and ``bandwidth_bps``."""
    if phase not in REDUCTIONS:
        raise ValueError(f"{phase!r} is not a reduction with partials; reductions: {', '.join(REDUCTIONS)}")
    if isinstance(slices, bool) or not isinstance(slices, int) or slices < 1:
        raise ValueError(f"slices must be a positive integer, not {slices!r}")
    if not bandwidth_bps > 0:
        raise ValueError(f"the GPU's bandwidth must be positive, not {bandwidth_bps!r}")
    reduction = REDUCTIONS[phase]
    groups, holders = _groups_and_holders(reduction, tensor, slices)
    read = groups * holders * len(reduction.partial) * PARTIAL_BYTES
    written = groups * reduction.combined_floats * PARTIAL_BYTES
    return CombineStep(op, phase, groups, holders, read, written,
                       launch_overhead_s + (read + written) / bandwidth_bps)


def combine_steps(plan, slices=None):
    """The combine steps of ``plan`` (a :class:`~matndp.host.offload.records.Plan`), one
    per reduction phase of every op placed on the NDP, in graph order, its tensors dealt
    over ``slices`` slices (default the plan's); on one slice there is nothing to combine."""
    slices = slices or plan.meta["ndp_slices"]
    if slices == 1:
        return []
    memory = plan.memory
    steps = []
    for op in plan.graph.ops:
        placement = plan.placements[op.name]
        if not placement.offloaded:
            continue
        for phase in OPS[placement.kernel].phases:
            if phase in REDUCTIONS:
                steps.append(combine_step(op.name, phase, plan.graph.tensors[placement.trigger],
                                          slices, memory.launch_overhead_s, memory.usable_bps))
    return steps


def combined_iteration_s(plan, steps=None):
    """The planned iteration with every combine step (default the plan's) on the path to
    its consumer."""
    steps = combine_steps(plan) if steps is None else steps
    return plan.matndp_s + sum(step.time_s for step in steps)
