.kernel bias_relu_bf16
; bias_relu on BF16 activations (C a multiple of 16), the bias FP32: y = maximum(x +
; bias[c], +0) rounded once to BF16.
.include "batchnorm.inc"
    bias_relu_arguments

.init
    bias_relu_initializer

.main
    remc    x1, OFFSET, CHANNELS
    shl     x1, x1, 1                  ; the FP32 bias' bytes
    sld     v1, [x1 + BIAS_SP]
    sld     v2, [x1 + BIAS_SP + 32]
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vadd    v1, v3, v1
    vadd    v2, v4, v2
    vmax    v1, v1, 0.0
    vmax    v2, v2, 0.0
    vpackbf v1, v1, v2
    vstm.x  [OFFSET + Y], v1
