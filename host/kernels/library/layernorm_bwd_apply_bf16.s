.kernel layernorm_bwd_apply_bf16
; layernorm_bwd_apply on BF16 dy, x and dx: dx = fma(dy·weight, a, fma(x, b, c)) in FP32,
; rounded once; grad_weight and grad_bias per column in FP32, as layernorm_bwd_apply
; accumulates the widened tensors' sectors 2s and 2s+1.
.include "layernorm.inc"
    layernorm_bwd_apply_arguments

.init
    layernorm_bwd_apply_initializer

.main
    divc    x1, OFFSET, ROWS
    remc    x2, OFFSET, ROWS
    shl     x1, x1, 7
    shl     x2, x2, 1                  ; the FP32 columns' bytes
    vld     v1, [OFFSET + X]
    vcvtlo  v2, v1
    vcvthi  v3, v1
    vld     v4, [x1 + ROW_COEFS + 32]  ; b
    vld     v5, [x1 + ROW_COEFS + 64]  ; c
    vfma    v6, v2, v4, v5
    vfma    v7, v3, v4, v5
    vld     v4, [x1 + ROW_COEFS]       ; a
    vcvtlo  v8, DATA
    vcvthi  v9, DATA
    sld     v10, [x2 + WEIGHT_SP]
    sld     v11, [x2 + WEIGHT_SP + 32]
    vmul    v10, v8, v10               ; g = dy·weight
    vmul    v11, v9, v11
    vfma    v6, v10, v4, v6
    vfma    v7, v11, v4, v7
    vpackbf v6, v6, v7
    vstm    [OFFSET + DX], v6
    vld     v5, [x1 + ROW_COEFS + 96]  ; m
    vfma    v2, v2, v4, v5             ; x̂
    vfma    v3, v3, v4, v5
    add     x3, x2, GRADS_SP
    samofma [x3], v8, v2
    samofma [x3 + 32], v9, v3
    samoadd [x3 + ROW_BYTES], v8
    samoadd.r.x [x3 + ROW_BYTES + 32], v9

.final
    layernorm_bwd_apply_finalizer
