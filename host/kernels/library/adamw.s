.kernel adamw
; torch.optim.AdamW (Adam with decoupled weight decay, _single_tensor_adam,
; foreach=False, amsgrad=False), one step on the writes of grad, in PyTorch's order:
;   param = param·(1 − lr·weight_decay)                  (if weight_decay != 0; else ·1, exact)
;   grad = −grad if maximize
;   then as adam without the weight-decay term.
.arg PARAM 0
.arg EXP_AVG 1
.arg EXP_AVG_SQ 2
.arg GRAD_SIGN 3         ; 0x80000000 when maximize, else 0
.arg DECAY 4             ; f32(1 − lr·weight_decay), 1.0 when weight_decay == 0
.arg LERP_WEIGHT 5       ; w = f32(1 − beta1), or f32(w − 1) when |w| >= 0.5
.arg LERP_FROM_END 6     ; 1 when |w| >= 0.5
.arg BETA2 7
.arg ONE_MINUS_BETA2 8
.arg BC2_SQRT 9         ; sqrt(1 − beta2^step)
.arg EPS 10
.arg NEG_STEP_SIZE 11    ; −lr / (1 − beta1^step)

.main
    vld     v1, [OFFSET + PARAM]
    vld     v2, [OFFSET + EXP_AVG]
    vld     v3, [OFFSET + EXP_AVG_SQ]
    vmul    v1, v1, DECAY
    vixor   v4, DATA, GRAD_SIGN
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
    vstm    [OFFSET + EXP_AVG], v2
    vstm    [OFFSET + EXP_AVG_SQ], v3
    vstm.x  [OFFSET + PARAM], v1
