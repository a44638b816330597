.kernel adam
; torch.optim.Adam, _single_tensor_adam (foreach=False, amsgrad=False), one step on the
; writes of grad, in PyTorch's order of tensor operations (scalars from the host):
;   grad = −grad if maximize
;   grad = grad + weight_decay·param                     (add with alpha: one rounding; if weight_decay != 0)
;   exp_avg.lerp_(grad, 1 − beta1)                       (fma(w, grad − exp_avg, exp_avg), or from the end)
;   exp_avg_sq = fma((1 − beta2)·grad, grad, exp_avg_sq·beta2)  (addcmul, fused as compiled)
;   denom = sqrt(exp_avg_sq) / sqrt(1 − beta2^step) + eps
;   param = param + (−step_size·exp_avg) / denom,  step_size = lr / (1 − beta1^step)
.include "optimizers.inc"
    adam_arguments

.main
    adam_step OFFSET, DATA, v1, vstm
    vstm.x  [OFFSET + PARAM], v1
