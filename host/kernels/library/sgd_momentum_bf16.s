.kernel sgd_momentum_bf16
; sgd_momentum with BF16 gradients and FP32 param and momentum buffer: each half
; widened and stepped as sgd_momentum, the updated param also written in BF16.
.arg PARAM 0
.arg MOMENTUM_BUFFER 1
.arg GRAD_SIGN 2         ; 0x80000000 when maximize, else 0
.arg WEIGHT_DECAY 3
.arg DECAY_ON 4          ; 1 when weight_decay != 0
.arg MOMENTUM 5
.arg ONE_MINUS_DAMPENING 6
.arg FIRST_STEP 7        ; 1 on the first step (PyTorch: no buffer yet)
.arg NESTEROV 8          ; 1 for Nesterov momentum
.arg NEG_LR 9
.arg PARAM_BF16 10       ; the updated param rounded to BF16 (the model's copy)

.main
    shl     x1, OFFSET, 1              ; FP32 state: two sectors per BF16 sector
    vcvtlo  v7, DATA                   ; grad, elements 0 … 7, exact
    vld     v1, [x1 + PARAM]
    vixor   v2, v7, GRAD_SIGN
    vfma    v3, v1, WEIGHT_DECAY, v2
    vsel    v2, v3, v2, DECAY_ON
    vld     v3, [x1 + MOMENTUM_BUFFER]
    vmul    v3, v3, MOMENTUM
    vfma    v3, v2, ONE_MINUS_DAMPENING, v3
    vsel    v3, v2, v3, FIRST_STEP
    vfma    v4, v3, MOMENTUM, v2
    vsel    v4, v4, v3, NESTEROV
    vfma    v10, v4, NEG_LR, v1
    vst     [x1 + MOMENTUM_BUFFER], v3
    vst     [x1 + PARAM], v10
    vcvthi  v7, DATA                   ; elements 8 … 15
    vld     v1, [x1 + PARAM + 32]
    vixor   v2, v7, GRAD_SIGN
    vfma    v3, v1, WEIGHT_DECAY, v2
    vsel    v2, v3, v2, DECAY_ON
    vld     v3, [x1 + MOMENTUM_BUFFER + 32]
    vmul    v3, v3, MOMENTUM
    vfma    v3, v2, ONE_MINUS_DAMPENING, v3
    vsel    v3, v2, v3, FIRST_STEP
    vfma    v4, v3, MOMENTUM, v2
    vsel    v4, v4, v3, NESTEROV
    vfma    v1, v4, NEG_LR, v1
    vst     [x1 + MOMENTUM_BUFFER + 32], v3
    vst     [x1 + PARAM + 32], v1
    vpackbf v10, v10, v1
    vstm.x  [OFFSET + PARAM_BF16], v10
