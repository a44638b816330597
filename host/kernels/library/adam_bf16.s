.kernel adam_bf16
; adam with BF16 gradients and FP32 param and state (mixed precision): each half of a
; gradient sector widened exactly and stepped as adam, and the updated param also
; written rounded to BF16.
.arg PARAM 0
.arg EXP_AVG 1
.arg EXP_AVG_SQ 2
.arg GRAD_SIGN 3         ; 0x80000000 when maximize, else 0
.arg WEIGHT_DECAY 4
.arg DECAY_ON 5          ; 1 when weight_decay != 0
.arg LERP_WEIGHT 6       ; w = f32(1 − beta1), or f32(w − 1) when |w| >= 0.5
.arg LERP_FROM_END 7     ; 1 when |w| >= 0.5: the lerp is grad + (w − 1)·(grad − exp_avg)
.arg BETA2 8
.arg ONE_MINUS_BETA2 9
.arg BC2_SQRT 10         ; sqrt(1 − beta2^step)
.arg EPS 11
.arg NEG_STEP_SIZE 12    ; −lr / (1 − beta1^step)
.arg PARAM_BF16 13       ; the updated param rounded to BF16 (the model's copy)

.main
    shl     x1, OFFSET, 1              ; FP32 state: two sectors per BF16 sector
    vcvtlo  v7, DATA                   ; grad, elements 0 … 7, exact
    vld     v1, [x1 + PARAM]
    vld     v2, [x1 + EXP_AVG]
    vld     v3, [x1 + EXP_AVG_SQ]
    vixor   v4, v7, GRAD_SIGN
    vfma    v5, v1, WEIGHT_DECAY, v4
    vsel    v4, v5, v4, DECAY_ON
    vsub    v5, v4, v2
    vsel    v6, v4, v2, LERP_FROM_END
    vfma    v2, v5, LERP_WEIGHT, v6
    vmul    v3, v3, BETA2
    vmul    v5, v4, ONE_MINUS_BETA2
    vfma    v3, v5, v4, v3                   ; addcmul: PyTorch's compiled kernel fuses this step
    vsqrt   v5, v3
    vdiv    v5, v5, BC2_SQRT
    vadd    v5, v5, EPS
    vmul    v6, v2, NEG_STEP_SIZE
    vdiv    v6, v6, v5
    vadd    v10, v1, v6
    vst     [x1 + EXP_AVG], v2
    vst     [x1 + EXP_AVG_SQ], v3
    vst     [x1 + PARAM], v10
    vcvthi  v7, DATA                   ; elements 8 … 15
    vld     v1, [x1 + PARAM + 32]
    vld     v2, [x1 + EXP_AVG + 32]
    vld     v3, [x1 + EXP_AVG_SQ + 32]
    vixor   v4, v7, GRAD_SIGN
    vfma    v5, v1, WEIGHT_DECAY, v4
    vsel    v4, v5, v4, DECAY_ON
    vsub    v5, v4, v2
    vsel    v6, v4, v2, LERP_FROM_END
    vfma    v2, v5, LERP_WEIGHT, v6
    vmul    v3, v3, BETA2
    vmul    v5, v4, ONE_MINUS_BETA2
    vfma    v3, v5, v4, v3                   ; addcmul: PyTorch's compiled kernel fuses this step
    vsqrt   v5, v3
    vdiv    v5, v5, BC2_SQRT
    vadd    v5, v5, EPS
    vmul    v6, v2, NEG_STEP_SIZE
    vdiv    v6, v6, v5
    vadd    v1, v1, v6
    vst     [x1 + EXP_AVG + 32], v2
    vst     [x1 + EXP_AVG_SQ + 32], v3
    vst     [x1 + PARAM + 32], v1
    vpackbf v10, v10, v1
    vstm.x  [OFFSET + PARAM_BF16], v10
