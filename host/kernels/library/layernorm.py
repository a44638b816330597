"""Layer norm along rows of L elements: the statistics and the normalization of the
forward, the row reductions and the input and parameter gradients of the backward; FP32
and their BF16 variants."""

import numpy as np

from matndp.host.kernels.library.bf16 import BF16_HALVES, bf16_row_partials, bf16_variant, sixteen
from matndp.host.kernels.library.shapes import (IN, OUT, ROW_REDUCE, ROW_VALUES, ROWS,
                                                column_groups, columns_region, fp32,
                                                init_column_groups, init_row_partials, matrix,
                                                multiple, one_per_row, per_column, per_row,
                                                row_partials, row_partials_region, rows_of)
from matndp.host.kernels.library.spec import LANES, Access, KernelSpec, ParamSpec


__all__ = ["KERNELS", "BF16_KERNELS", "PHASES"]


_VALUES = {
    **ROW_VALUES,
    "LENGTH": lambda b: b.f32(b.problem["columns"]),
    "INV_LENGTH": lambda b: b.f32(np.float32(1.0) / np.float32(b.problem["columns"])),
}


def _weight_or_partial_sectors(problem, partials):
    """layernorm_bwd_stats' initializer: a µthread per sector of the weight it copies or
    of the partials it clears, as many as the longer of the two needs."""
    return max(init_column_groups(problem, partials), init_row_partials(problem, partials))


def _kernel(name, summary, tensors, params, trigger, access, order, **fields):
    return KernelSpec(name, f"{name}.s", summary, ROWS, tensors, params, trigger, access, order,
                      values=_VALUES, check=multiple("columns", LANES), **fields)


KERNELS = (
    _kernel("layernorm_stats", "layer-norm statistics on the producer's writes of x",
            (fp32("x", IN, matrix, "rows × L, row-major"),
             fp32("mean", OUT, per_row, "(rows,)"),
             fp32("rstd", OUT, per_row, "(rows,)"),
             rows_of("row_coefs", OUT, 2, "per row: 8 × rstd, 8 × (−mean·rstd)")),
            (ParamSpec("eps", 1e-5, "added to the variance"),), "x", Access.WRITE,
            "sector s of row r: sq[r][s mod K] = fma(x, x, sq[r][…]), sum[r][s mod K] += x "
            "in trigger order; " + ROW_REDUCE + "; mean = Σx / L; "
            "rstd = 1/√(max(fma(−mean, mean, Σx² / L), 0) + eps); row coefficients rstd and "
            "−(mean·rstd)", order_independent=False,
            scratchpad=(row_partials_region("SQUARES_SP"), row_partials_region("SUMS_SP")),
            partials=row_partials, init_threads=init_row_partials, final_threads=one_per_row),
    _kernel("layernorm_apply", "layer-norm normalization on reads of x",
            (fp32("x", IN, matrix, "rows × L, row-major"),
             rows_of("row_coefs", IN, 2, "from layernorm_stats"),
             fp32("weight", IN, per_column, "(L,): gamma"),
             fp32("bias", IN, per_column, "(L,): beta"),
             fp32("y", OUT, matrix, "like x")), (), "x", Access.READ,
            "y = fma(fma(x, rstd, −mean·rstd), weight, bias)",
            scratchpad=(columns_region("WEIGHT_SP"), columns_region("BIAS_SP")),
            init_threads=init_column_groups),
    _kernel("layernorm_bwd_stats", "layer-norm backward row reductions on the writes of dy",
            (fp32("dy", IN, matrix, "rows × L, row-major"),
             fp32("x", IN, matrix, "the forward input, like dy"),
             fp32("weight", IN, per_column, "(L,): gamma"),
             fp32("mean", IN, per_row, "(rows,): the forward's mean"),
             fp32("rstd", IN, per_row, "(rows,): the forward's rstd"),
             rows_of("row_coefs", OUT, 4, "per row: 8 × a, 8 × b, 8 × c, 8 × m")),
            (), "dy", Access.WRITE,
            "g = dy·weight; sector s of row r: ds[r][s mod K] = fma(g, x, …), "
            "db[r][s mod K] += g in trigger order; " + ROW_REDUCE + "; a = rstd; "
            "b = (((fma(db, mean, −ds)·a)·a)·a)·f32(1/L); c = fma(−b, mean, −((db·a)·f32(1/L))); "
            "m = −(mean·rstd)", order_independent=False,
            scratchpad=(columns_region("WEIGHT_SP"), row_partials_region("DOTS_SP"),
                        row_partials_region("SUMS_SP")),
            partials=row_partials, init_threads=_weight_or_partial_sectors,
            final_threads=one_per_row),
    _kernel("layernorm_bwd_apply", "layer-norm input and parameter gradients on reads of dy",
            (fp32("dy", IN, matrix, "rows × L, row-major"),
             fp32("x", IN, matrix, "the forward input, like dy"),
             fp32("weight", IN, per_column, "(L,): gamma"),
             rows_of("row_coefs", IN, 4, "from layernorm_bwd_stats"),
             fp32("dx", OUT, matrix, "like dy"),
             fp32("grad_weight", OUT, per_column, "(L,)"),
             fp32("grad_bias", OUT, per_column, "(L,)")),
            (), "dy", Access.READ,
            "dx = fma(dy·weight, a, fma(x, b, c)); x̂ = fma(x, a, m); per column, in trigger "
            "order: grad_weight = fma(dy, x̂, grad_weight), grad_bias += dy",
            order_independent=False,
            scratchpad=(columns_region("WEIGHT_SP"), columns_region("GRADS_SP", 2)),
            init_threads=init_column_groups, final_threads=column_groups),
)

_BY_NAME = {spec.name: spec for spec in KERNELS}

BF16_KERNELS = (
    bf16_variant(_BY_NAME["layernorm_stats"], ("x",), check=sixteen("columns"),
                 order=_BY_NAME["layernorm_stats"].order + BF16_HALVES, partials=bf16_row_partials),
    bf16_variant(_BY_NAME["layernorm_apply"], ("x", "y"), check=sixteen("columns")),
    bf16_variant(_BY_NAME["layernorm_bwd_stats"], ("dy", "x"), check=sixteen("columns"),
                 order=_BY_NAME["layernorm_bwd_stats"].order + BF16_HALVES,
                 partials=bf16_row_partials),
    bf16_variant(_BY_NAME["layernorm_bwd_apply"], ("dy", "x", "dx"), check=sixteen("columns")),
)

PHASES = (
    ("layernorm_fwd", ("layernorm_stats", "layernorm_apply"), "layer-norm forward"),
    ("layernorm_bwd", ("layernorm_bwd_stats", "layernorm_bwd_apply"), "layer-norm backward"),
)
