.kernel bn_bwd_apply_bf16
; bn_bwd_apply on BF16 tensors: dx = fma(dy, a[c], fma(x, b[c], c[c])) in FP32, rounded once.
.include "batchnorm.inc"
    bn_bwd_apply_arguments

.init
    bn_bwd_apply_initializer

.main
    remc    x1, OFFSET, CHANNELS
    shl     x1, x1, 1
    vld     v1, [OFFSET + X]
    vcvtlo  v2, v1
    vcvthi  v3, v1
    sld     v4, [x1 + COEF_B_SP]
    sld     v5, [x1 + COEF_B_SP + 32]
    sld     v6, [x1 + COEF_C_SP]
    sld     v7, [x1 + COEF_C_SP + 32]
    vfma    v2, v2, v4, v6
    vfma    v3, v3, v5, v7
    sld     v4, [x1 + COEF_A_SP]
    sld     v5, [x1 + COEF_A_SP + 32]
    vcvtlo  v6, DATA
    vcvthi  v7, DATA
    vfma    v2, v6, v4, v2
    vfma    v3, v7, v5, v3
    vpackbf v2, v2, v3
    vstm.x  [OFFSET + DX], v2
