.kernel adam_bf16
; adam with BF16 gradients and FP32 param and state (mixed precision): each half of a
; gradient sector widened exactly and stepped as adam, and the updated param also
; written rounded to BF16.
.include "optimizers.inc"
    adam_arguments
.arg PARAM_BF16 13       ; the updated param rounded to BF16 (the model's copy)

.main
    bf16_gradient_step adam_step
