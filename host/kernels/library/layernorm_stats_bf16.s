.kernel layernorm_stats_bf16
; layernorm_stats on BF16 x (L a multiple of 16): a sector's halves are combined first,
; x_lo² + x_hi² (the second by FMA) and x_lo + x_hi, then added into the row's partial
; (sector mod K) in trigger order; the finalizer is layernorm_stats'.
.include "layernorm.inc"
    layernorm_stats_arguments
.arg SUMS_SP 11          ; the Σx partials: SQUARES_SP + PARTIALS_BYTES

.init
    clear_partials SQUARES_SP

.main
    vcvtlo  v1, DATA
    vcvthi  v2, DATA
    vmul    v3, v1, v1
    vfma    v3, v2, v2, v3
    vadd    v4, v1, v2
    row_partial
    samoadd [x1 + SQUARES_SP], v3
    samoadd.r.x [x1 + SUMS_SP], v4

.final
    layernorm_stats_finalizer
