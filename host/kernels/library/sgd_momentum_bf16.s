.kernel sgd_momentum_bf16
; sgd_momentum with BF16 gradients and FP32 param and momentum buffer: each half
; widened and stepped as sgd_momentum, the updated param also written in BF16.
.include "optimizers.inc"
    sgd_momentum_arguments
.arg PARAM_BF16 10       ; the updated param rounded to BF16 (the model's copy)

.main
    bf16_gradient_step sgd_momentum_step
