.kernel adam
; torch.optim.Adam, _single_tensor_adam (foreach=False, amsgrad=False), one step on the
; writes of grad, in PyTorch's order of tensor operations (scalars from the host):
;   grad = −grad if maximize
;   grad = grad + weight_decay·param                     (add with alpha: one rounding; if weight_decay != 0)
;   exp_avg.lerp_(grad, 1 − beta1)                       (fma(w, grad − exp_avg, exp_avg), or from the end)
;   exp_avg_sq = fma((1 − beta2)·grad, grad, exp_avg_sq·beta2)  (addcmul, fused as compiled)
;   denom = sqrt(exp_avg_sq) / sqrt(1 − beta2^step) + eps
;   param = param + (−step_size·exp_avg) / denom,  step_size = lr / (1 − beta1^step)
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

.main
    vld     v1, [OFFSET + PARAM]
    vld     v2, [OFFSET + EXP_AVG]
    vld     v3, [OFFSET + EXP_AVG_SQ]
    vixor   v4, DATA, GRAD_SIGN
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
    vstm    [OFFSET + EXP_AVG], v2
    vstm    [OFFSET + EXP_AVG_SQ], v3
    vstm.x  [OFFSET + PARAM], v1
