.kernel sgd_momentum
; torch.optim.SGD with momentum, _single_tensor_sgd (foreach=False), one step on the
; writes of grad, in PyTorch's order (add with alpha is one rounding):
;   grad = −grad if maximize
;   grad = grad + weight_decay·param                     (if weight_decay != 0)
;   buf = grad on the first step, else buf = buf·momentum + (1 − dampening)·grad
;   grad = grad + momentum·buf if nesterov, else buf
;   param = param + (−lr)·grad
; The buffer is read on the first step too (its value is not used).
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

.main
    vld     v1, [OFFSET + PARAM]
    vixor   v2, DATA, GRAD_SIGN
    vfma    v3, v1, WEIGHT_DECAY, v2
    vsel    v2, v3, v2, DECAY_ON
    vld     v3, [OFFSET + MOMENTUM_BUFFER]
    vmul    v3, v3, MOMENTUM
    vfma    v3, v2, ONE_MINUS_DAMPENING, v3
    vsel    v3, v2, v3, FIRST_STEP
    vfma    v4, v3, MOMENTUM, v2
    vsel    v4, v4, v3, NESTEROV
    vfma    v1, v4, NEG_LR, v1
    vstm    [OFFSET + MOMENTUM_BUFFER], v3
    vstm.x  [OFFSET + PARAM], v1
