.kernel softmax_bwd_dot_bf16
; softmax_bwd_dot on BF16 dy and y: dy_lo·y_lo + dy_hi·y_hi (the second by FMA) added
; into the row's partial (sector mod K) in trigger order; the finalizer is softmax_bwd_dot'.
.include "softmax.inc"
    softmax_bwd_dot_arguments

.init
    softmax_bwd_dot_initializer

.main
    vld     v1, [OFFSET + Y]
    vcvtlo  v2, v1
    vcvthi  v3, v1
    vcvtlo  v4, DATA
    vcvthi  v5, DATA
    vmul    v2, v4, v2
    vfma    v2, v5, v3, v2
    row_partial
    samoadd.r.x [x1 + DOTS_SP], v2

.final
    row_reduction_finalizer DOTS_SP, vadd, vredsum, DOT_ROWS
