"""Kernels over channels-innermost tensors (rows = N·H·W): bias + ReLU, and batch norm —
the statistics and the normalization of the forward, the reductions and the input
gradient of the backward; FP32 and their BF16 variants."""

from matndp.host.kernels.library.bf16 import bf16_variant, sixteen
from matndp.host.kernels.library.shapes import (CHANNELS, IN, OUT, STATE, at_least, both,
                                                channel_groups, channel_partials, fp32,
                                                init_channel_groups, init_channel_partials,
                                                matrix, multiple, per_channel)
from matndp.host.kernels.library.spec import LANES, Access, KernelSpec, ParamSpec, Region


__all__ = ["KERNELS", "BF16_KERNELS", "PHASES"]


def _row_bytes(b):
    return 4 * b.problem["channels"]


# The argument values every kernel of the family may declare.
_VALUES = {
    "CHANNELS": lambda b: b.row_descriptor("channels"),
    "GROUPS": lambda b: b.row_descriptor("channels", b.partials),
    "ROW_BYTES": _row_bytes,
    "PARTIALS_BYTES": lambda b: _row_bytes(b) * b.partials,
    "COUNT": lambda b: b.f32(b.problem["rows"]),
}


def _coefficients(*names):
    """One scratchpad region per per-channel coefficient."""
    return tuple(Region(name, lambda problem, partials: 4 * problem["channels"]) for name in names)


def _partials(*names):
    """One scratchpad region per statistic, each the K partials of every channel."""
    return tuple(Region(name, lambda problem, partials: 4 * problem["channels"] * partials)
                 for name in names)


_TWO_ROWS = at_least("rows", 2, "n/(n − 1) for the running variance")

_STATS_ORDER = (
    "sector s: acc[s mod K·C/8] += x, sq[s mod K·C/8] = fma(x, x, sq[…]) in trigger order; "
    "finalizer per channel group: Σ = partial 0 + partial 1 + … + partial K−1; mean = Σx / n; "
    "var = max(fma(−mean, mean, Σx² / n), 0); invstd = 1/√(var + eps); scale = weight·invstd; "
    "shift = fma(−mean, scale, bias); running_mean = fma(mean, momentum, running_mean·(1 − momentum)); "
    "running_var = fma(var·(n/(n − 1)), momentum, running_var·(1 − momentum))")


def _kernel(name, summary, tensors, params, trigger, access, order, **fields):
    return KernelSpec(name, f"{name}.s", summary, CHANNELS, tensors, params, trigger, access,
                      order, values=_VALUES, **fields)


KERNELS = (
    _kernel("bias_relu", "bias and ReLU on the producer's writes of x",
            (fp32("x", IN, matrix, "rows × C, channels innermost"),
             fp32("bias", IN, per_channel, "(C,)"),
             fp32("y", OUT, matrix, "like x")), (), "x", Access.WRITE,
            "y = maximum(x + bias[c], +0)",
            scratchpad=_coefficients("BIAS_SP"), init_threads=init_channel_groups,
            check=multiple("channels", LANES)),
    _kernel("bn_stats", "batch-norm statistics on the producer's writes of x",
            (fp32("x", IN, matrix, "rows × C, channels innermost (N·H·W rows)"),
             fp32("weight", IN, per_channel, "(C,)"),
             fp32("bias", IN, per_channel, "(C,)"),
             fp32("running_mean", STATE, per_channel, "(C,)"),
             fp32("running_var", STATE, per_channel, "(C,)"),
             fp32("mean", OUT, per_channel, "(C,): PyTorch's save_mean"),
             fp32("invstd", OUT, per_channel, "(C,): PyTorch's save_invstd"),
             fp32("scale", OUT, per_channel, "(C,): weight·invstd", True),
             fp32("shift", OUT, per_channel, "(C,): bias − mean·scale", True)),
            (ParamSpec("eps", 1e-5, "added to the variance"),
             ParamSpec("momentum", 0.1, "running-statistics factor")),
            "x", Access.WRITE, _STATS_ORDER, order_independent=False,
            scratchpad=_partials("SQUARES_SP", "SUMS_SP"), partials=channel_partials,
            init_threads=init_channel_partials, final_threads=channel_groups,
            check=both(multiple("channels", LANES), _TWO_ROWS)),
    _kernel("bn_apply", "batch-norm normalization on reads of x",
            (fp32("x", IN, matrix, "rows × C, channels innermost"),
             fp32("scale", IN, per_channel, "(C,), from bn_stats", True),
             fp32("shift", IN, per_channel, "(C,), from bn_stats", True),
             fp32("y", OUT, matrix, "like x")), (), "x", Access.READ,
            "y = fma(x, scale[c], shift[c])",
            scratchpad=_coefficients("SCALE_SP", "SHIFT_SP"), init_threads=init_channel_groups,
            check=multiple("channels", LANES)),
    _kernel("bn_bwd_stats", "batch-norm backward reductions on the writes of dy",
            (fp32("dy", IN, matrix, "rows × C, channels innermost"),
             fp32("x", IN, matrix, "the forward input, like dy"),
             fp32("mean", IN, per_channel, "(C,): save_mean"),
             fp32("invstd", IN, per_channel, "(C,): save_invstd"),
             fp32("weight", IN, per_channel, "(C,)"),
             fp32("grad_weight", OUT, per_channel, "(C,)"),
             fp32("grad_bias", OUT, per_channel, "(C,)"),
             fp32("coef_a", OUT, per_channel, "(C,): invstd·weight", True),
             fp32("coef_b", OUT, per_channel, "(C,): −a·k", True),
             fp32("coef_c", OUT, per_channel, "(C,): a·(k·mean − Σdy/n)", True)),
            (), "dy", Access.WRITE,
            "sector s: d[s mod K·C/8] = fma(dy, x, d[…]), g[s mod K·C/8] += dy in trigger "
            "order; finalizer per channel group: partials added in ascending order; "
            "dot = fma(−mean, Σdy, Σdy·x); grad_weight = dot·invstd; grad_bias = Σdy; "
            "k = ((dot·invstd)·invstd) / n; a = invstd·weight; b = −(a·k); "
            "c = a·fma(k, mean, −(Σdy / n))",
            order_independent=False, scratchpad=_partials("DOTS_SP", "SUMS_SP"),
            partials=channel_partials, init_threads=init_channel_partials,
            final_threads=channel_groups,
            check=multiple("channels", LANES)),
    _kernel("bn_bwd_apply", "batch-norm input gradient on reads of dy",
            (fp32("dy", IN, matrix, "rows × C, channels innermost"),
             fp32("x", IN, matrix, "the forward input, like dy"),
             fp32("coef_a", IN, per_channel, "(C,), from bn_bwd_stats", True),
             fp32("coef_b", IN, per_channel, "(C,), from bn_bwd_stats", True),
             fp32("coef_c", IN, per_channel, "(C,), from bn_bwd_stats", True),
             fp32("dx", OUT, matrix, "like dy")), (), "dy", Access.READ,
            "dx = fma(dy, a[c], fma(x, b[c], c[c]))",
            scratchpad=_coefficients("COEF_A_SP", "COEF_B_SP", "COEF_C_SP"),
            init_threads=init_channel_groups, check=multiple("channels", LANES)),
)

_BY_NAME = {spec.name: spec for spec in KERNELS}

BF16_KERNELS = (
    bf16_variant(_BY_NAME["bias_relu"], ("x", "y"), check=sixteen("channels")),
    bf16_variant(_BY_NAME["bn_stats"], ("x",), check=both(sixteen("channels"), _TWO_ROWS)),
    bf16_variant(_BY_NAME["bn_apply"], ("x", "y"), check=sixteen("channels")),
    bf16_variant(_BY_NAME["bn_bwd_stats"], ("dy", "x"), check=sixteen("channels")),
    bf16_variant(_BY_NAME["bn_bwd_apply"], ("dy", "x", "dx"), check=sixteen("channels")),
)

PHASES = (
    ("batchnorm_fwd", ("bn_stats", "bn_apply"), "batch-norm forward (training)"),
    ("batchnorm_bwd", ("bn_bwd_stats", "bn_bwd_apply"), "batch-norm backward"),
)
