.kernel bn_bwd_apply
; Batch-norm backward, dx = a·dy + (b·x + c) per channel (the coefficients bn_bwd_stats
; wrote, copied into the scratchpad by the initializer), on reads of dy.
.include "batchnorm.inc"
    bn_bwd_apply_arguments

.init
    bn_bwd_apply_initializer

.main
    remc    x1, OFFSET, CHANNELS
    vld     v1, [OFFSET + X]
    sld     v2, [x1 + COEF_B_SP]
    sld     v3, [x1 + COEF_C_SP]
    vfma    v1, v1, v2, v3
    sld     v2, [x1 + COEF_A_SP]
    vfma    v1, DATA, v2, v1
    vstm.x  [OFFSET + DX], v1
