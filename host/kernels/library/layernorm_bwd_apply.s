.kernel layernorm_bwd_apply
; Layer-norm backward on reads of dy: dx = a·(dy·weight) + (b·x + c) with the row
; coefficients of layernorm_bwd_stats, and the parameter gradients per column,
; grad_weight = Σ dy·x̂ and grad_bias = Σ dy over the rows in trigger order, x̂ = a·x + m.
.include "layernorm.inc"
    layernorm_bwd_apply_arguments

.init
    layernorm_bwd_apply_initializer

.main
    divc    x1, OFFSET, ROWS
    remc    x2, OFFSET, ROWS
    shl     x1, x1, 7
    vld     v1, [OFFSET + X]
    vld     v2, [x1 + ROW_COEFS + 32]  ; b
    vld     v3, [x1 + ROW_COEFS + 64]  ; c
    vfma    v2, v1, v2, v3             ; b·x + c
    sld     v3, [x2 + WEIGHT_SP]
    vmul    v3, DATA, v3               ; g = dy·weight
    vld     v4, [x1 + ROW_COEFS]       ; a
    vfma    v2, v3, v4, v2
    vstm    [OFFSET + DX], v2
    vld     v5, [x1 + ROW_COEFS + 96]  ; m
    vfma    v1, v1, v4, v5             ; x̂
    add     x3, x2, GRADS_SP
    samofma [x3], DATA, v1
    samoadd.r.x [x3 + ROW_BYTES], DATA

.final
    layernorm_bwd_apply_finalizer
