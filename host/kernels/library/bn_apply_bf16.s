.kernel bn_apply_bf16
; bn_apply on BF16 activations: y = fma(x, scale[c], shift[c]) in FP32, rounded once.
.include "batchnorm.inc"
    bn_apply_arguments

.init
    bn_apply_initializer

.main
    remc    x1, OFFSET, CHANNELS
    shl     x1, x1, 1                  ; the FP32 coefficients' bytes
    sld     v1, [x1 + SCALE_SP]
    sld     v2, [x1 + SCALE_SP + 32]
    sld     v3, [x1 + SHIFT_SP]
    sld     v4, [x1 + SHIFT_SP + 32]
    vcvtlo  v5, DATA
    vcvthi  v6, DATA
    vfma    v5, v5, v1, v3
    vfma    v6, v6, v2, v4
    vpackbf v5, v5, v6
    vstm.x  [OFFSET + Y], v5
