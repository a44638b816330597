"""Softmax along rows of L elements: the row maxima, the exponentials and their sums, the
normalization; the backward's row dot products and input gradient; FP32 and their BF16
variants."""

from matndp.host.kernels.library.bf16 import BF16_HALVES, bf16_row_partials, bf16_variant, sixteen
from matndp.host.kernels.library.shapes import (IN, OUT, ROW_REDUCE, ROW_VALUES, ROWS, STATE,
                                                fp32, init_row_partials, init_rows, matrix,
                                                multiple, one_per_row, row_partials,
                                                row_partials_region, rows_of)
from matndp.host.kernels.library.spec import LANES, SECTOR_BYTES, Access, KernelSpec, Region


__all__ = ["KERNELS", "BF16_KERNELS", "PHASES"]


def _kernel(name, summary, tensors, trigger, access, order, **fields):
    return KernelSpec(name, f"{name}.s", summary, ROWS, tensors, (), trigger, access, order,
                      values=ROW_VALUES, check=multiple("columns", LANES), **fields)


KERNELS = (
    _kernel("softmax_max", "softmax row maxima on the producer's writes of x",
            (fp32("x", IN, matrix, "rows × L, row-major"),
             rows_of("max_rows", OUT, 1, "per row: 8 × its maximum")), "x", Access.WRITE,
            "per row and lane, the maximum (IEEE 754-2019, NaN propagates) over the row's "
            "sectors and partials, then over the lanes",
            scratchpad=(row_partials_region("MAX_SP"),), partials=row_partials,
            init_threads=init_row_partials, final_threads=one_per_row),
    _kernel("softmax_expsum", "softmax exponentials and row sums on reads of x",
            (fp32("x", IN, matrix, "rows × L, row-major"),
             rows_of("max_rows", IN, 1, "from softmax_max"),
             fp32("y", OUT, matrix, "like x: e = exp(x − max)"),
             rows_of("inv_rows", OUT, 1, "per row: 8 × 1/Σe")), "x", Access.READ,
            "e = exp(x − max) (the library exponential); per row and lane Σe in trigger "
            "order; finalizer: the lanes pairwise, then 1/Σ", order_independent=False,
            scratchpad=(Region("SUMS_SP", lambda problem, partials: problem["rows"] * SECTOR_BYTES),),
            init_threads=init_rows, final_threads=one_per_row),
    _kernel("softmax_scale", "softmax normalization on reads of y",
            (fp32("y", STATE, matrix, "rows × L: e in, the softmax out"),
             rows_of("inv_rows", IN, 1, "from softmax_expsum")), "y", Access.READ,
            "y = e·(1/Σe)"),
    _kernel("softmax_bwd_dot", "softmax backward row dot products on the writes of dy",
            (fp32("dy", IN, matrix, "rows × L, row-major"),
             fp32("y", IN, matrix, "the forward output, like dy"),
             rows_of("dot_rows", OUT, 1, "per row: 8 × Σ dy·y")), "dy", Access.WRITE,
            "sector s of row r: d[r][s mod K] = fma(dy, y, d[r][…]) in trigger order; "
            + ROW_REDUCE, order_independent=False,
            scratchpad=(row_partials_region("DOTS_SP"),), partials=row_partials,
            init_threads=init_row_partials, final_threads=one_per_row),
    _kernel("softmax_bwd_apply", "softmax input gradient on reads of dy",
            (fp32("dy", IN, matrix, "rows × L, row-major"),
             fp32("y", IN, matrix, "the forward output, like dy"),
             rows_of("dot_rows", IN, 1, "from softmax_bwd_dot"),
             fp32("dx", OUT, matrix, "like dy")), "dy", Access.READ, "dx = (dy − Σ dy·y)·y"),
)

_BY_NAME = {spec.name: spec for spec in KERNELS}

# softmax_expsum_bf16 keeps e in FP32 (exps) so that softmax_scale_bf16 rounds y once.
BF16_KERNELS = (
    bf16_variant(_BY_NAME["softmax_max"], ("x",), check=sixteen("columns"),
                 partials=bf16_row_partials),
    bf16_variant(_BY_NAME["softmax_expsum"], ("x",), check=sixteen("columns"), tensors=(
        fp32("x", IN, matrix, "rows × L, row-major"),
        rows_of("max_rows", IN, 1, "from softmax_max_bf16"),
        fp32("exps", OUT, matrix, "rows × L FP32: e = exp(x − max)", True),
        rows_of("inv_rows", OUT, 1, "per row: 8 × 1/Σe")),
        order=_BY_NAME["softmax_expsum"].order + "; e kept in FP32" + BF16_HALVES),
    bf16_variant(_BY_NAME["softmax_scale"], ("x", "y"), check=sixteen("columns"), tensors=(
        fp32("x", IN, matrix, "rows × L (the pass over the tensor; values not used)"),
        fp32("exps", IN, matrix, "from softmax_expsum_bf16", True),
        rows_of("inv_rows", IN, 1, "from softmax_expsum_bf16"),
        fp32("y", OUT, matrix, "like x")), trigger="x",
        order="y = bf16(e·(1/Σe)), e from the FP32 exponentials"),
    bf16_variant(_BY_NAME["softmax_bwd_dot"], ("dy", "y"), check=sixteen("columns"),
                 order=_BY_NAME["softmax_bwd_dot"].order + BF16_HALVES, partials=bf16_row_partials),
    bf16_variant(_BY_NAME["softmax_bwd_apply"], ("dy", "y", "dx"), check=sixteen("columns")),
)

PHASES = (
    ("softmax_fwd", ("softmax_max", "softmax_expsum", "softmax_scale"), "softmax along rows"),
    ("softmax_bwd", ("softmax_bwd_dot", "softmax_bwd_apply"), "softmax backward"),
)
