.kernel adamw
; torch.optim.AdamW (Adam with decoupled weight decay, _single_tensor_adam,
; foreach=False, amsgrad=False), one step on the writes of grad, in PyTorch's order:
;   param = param·(1 − lr·weight_decay)                  (if weight_decay != 0; else ·1, exact)
;   grad = −grad if maximize
;   then as adam without the weight-decay term.
.include "optimizers.inc"
    adamw_arguments

.main
    adamw_step OFFSET, DATA, v1, vstm
    vstm.x  [OFFSET + PARAM], v1
