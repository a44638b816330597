.kernel softmax_expsum_bf16
; softmax_expsum on BF16 x: e = exp(x − max) per half, stored in FP32 (exps, twice the
; bytes), and e_lo + e_hi added into the row sum in trigger order; the finalizer is
; softmax_expsum'. softmax_scale_bf16 rounds y once from these FP32 exponentials.
.arg EXPS 0              ; FP32, rows × L
.include "exp.inc"
.include "softmax.inc"
    softmax_expsum_arguments

.init
    softmax_expsum_initializer

.main
    divc    x1, OFFSET, ROWS
    shl     x1, x1, 5
    vld     v9, [x1 + MAX_ROWS]
    shl     x2, OFFSET, 1              ; the FP32 exponentials' bytes
    vcvtlo  v1, DATA
    vsub    v1, v1, v9
    exp     v10, v1, v2, v3            ; elements 0 … 7
    vst     [x2 + EXPS], v10
    vcvthi  v1, DATA
    vsub    v1, v1, v9
    exp     v11, v1, v2, v3            ; elements 8 … 15
    vst     [x2 + EXPS + 32], v11
    vadd    v10, v10, v11
    samoadd.r.x [x1 + SUMS_SP], v10

.final
    softmax_expsum_finalizer
