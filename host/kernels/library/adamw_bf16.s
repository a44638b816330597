.kernel adamw_bf16
; adamw with BF16 gradients and FP32 param and state: each half widened and stepped as
; adamw, and the updated param also written rounded to BF16.
.include "optimizers.inc"
    adamw_arguments
.arg PARAM_BF16 12       ; the updated param rounded to BF16 (the model's copy)

.main
    bf16_gradient_step adamw_step
