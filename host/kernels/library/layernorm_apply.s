.kernel layernorm_apply
; y = (x·rstd + (−mean·rstd))·weight + bias, both steps one rounding, on reads of x; the
; row coefficients layernorm_stats wrote, weight and bias copied into the scratchpad by
; the initializer.
.include "layernorm.inc"
    layernorm_apply_arguments

.init
    layernorm_apply_initializer

.main
    divc    x1, OFFSET, ROWS
    remc    x2, OFFSET, ROWS           ; the column group's bytes
    shl     x1, x1, 6
    vld     v1, [x1 + ROW_COEFS]
    vld     v2, [x1 + ROW_COEFS + 32]
    vfma    v1, DATA, v1, v2           ; x̂
    sld     v2, [x2 + WEIGHT_SP]
    sld     v3, [x2 + BIAS_SP]
    vfma    v1, v1, v2, v3
    vstm.x  [OFFSET + Y], v1
