.kernel layernorm_bwd_stats_bf16
; layernorm_bwd_stats on BF16 dy and x: with g = dy·weight per half, a sector adds
; g_lo·x_lo + g_hi·x_hi (the second by FMA) and g_lo + g_hi into the row's partial (sector
; mod K) in trigger order; the finalizer is layernorm_bwd_stats'.
.include "layernorm.inc"
    layernorm_bwd_stats_arguments
.arg SUMS_SP 14          ; the Σg partials: DOTS_SP + PARTIALS_BYTES

.init
    layernorm_bwd_stats_initializer

.main
    divc    x1, OFFSET, ROWS
    remc    x2, OFFSET, ROWS
    shl     x2, x2, 1
    sld     v1, [x2 + WEIGHT_SP]
    sld     v2, [x2 + WEIGHT_SP + 32]
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vmul    v1, v3, v1                 ; g = dy·weight
    vmul    v2, v4, v2
    vld     v5, [OFFSET + X]
    vcvtlo  v3, v5
    vcvthi  v4, v5
    vmul    v3, v1, v3
    vfma    v3, v2, v4, v3
    vadd    v4, v1, v2
    shl     x1, x1, PARTIAL_SHIFT
    and     x3, OFFSET, PARTIAL_MASK
    add     x1, x1, x3
    samoadd [x1 + DOTS_SP], v3
    samoadd.r.x [x1 + SUMS_SP], v4

.final
    layernorm_bwd_stats_finalizer
