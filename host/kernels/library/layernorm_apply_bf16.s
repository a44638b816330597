.kernel layernorm_apply_bf16
; layernorm_apply on BF16 x and y: y = fma(fma(x, rstd, −mean·rstd), weight, bias) in
; FP32, rounded once (weight and bias FP32).
.include "layernorm.inc"
    layernorm_apply_arguments

.init
    layernorm_apply_initializer

.main
    divc    x1, OFFSET, ROWS
    remc    x2, OFFSET, ROWS
    shl     x1, x1, 6
    shl     x2, x2, 1                  ; the FP32 weight and bias bytes
    vld     v1, [x1 + ROW_COEFS]
    vld     v2, [x1 + ROW_COEFS + 32]
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vfma    v3, v3, v1, v2
    vfma    v4, v4, v1, v2
    sld     v1, [x2 + WEIGHT_SP]
    sld     v2, [x2 + BIAS_SP]
    vfma    v3, v3, v1, v2
    sld     v1, [x2 + WEIGHT_SP + 32]
    sld     v2, [x2 + BIAS_SP + 32]
    vfma    v4, v4, v1, v2
    vpackbf v3, v3, v4
    vstm.x  [OFFSET + Y], v3
