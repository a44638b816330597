.kernel sgd_momentum
; torch.optim.SGD with momentum, _single_tensor_sgd (foreach=False), one step on the
; writes of grad, in PyTorch's order (add with alpha is one rounding):
;   grad = −grad if maximize
;   grad = grad + weight_decay·param                     (if weight_decay != 0)
;   buf = grad on the first step, else buf = buf·momentum + (1 − dampening)·grad
;   grad = grad + momentum·buf if nesterov, else buf
;   param = param + (−lr)·grad
; The buffer is read on the first step too (its value is not used).
.include "optimizers.inc"
    sgd_momentum_arguments

.main
    sgd_momentum_step OFFSET, DATA, v1, vstm
    vstm.x  [OFFSET + PARAM], v1
