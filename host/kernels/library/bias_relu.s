.kernel bias_relu
; y = maximum(x + bias[c], +0) on the producer's writes of x, channels innermost: a sector
; holds channels 8g … 8g+7 of one row. The initializer copies the bias into the
; scratchpad, so a sector costs no load.
.include "batchnorm.inc"
    bias_relu_arguments

.init
    bias_relu_initializer

.main
    remc    x1, OFFSET, CHANNELS
    sld     v1, [x1 + BIAS_SP]
    vadd    v1, DATA, v1
    vmax    v1, v1, 0.0
    vstm.x  [OFFSET + Y], v1
