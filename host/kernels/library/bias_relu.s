.kernel bias_relu
; y = maximum(x + bias[c], +0) on the producer's writes of x, channels innermost
; (rows × C, C a multiple of 8): a sector holds channels 8g … 8g+7 of one row. The
; initializer copies the bias into the scratchpad, so a sector costs no load.
.arg Y 0
.arg BIAS 1              ; the bias in memory (C FP32)
.arg CHANNELS 2          ; divisor descriptor of 4C: OFFSET mod 4C = the channel group's bytes
.arg BIAS_SP 3           ; the bias' copy in the scratchpad
.arg ROW_BYTES 4         ; 4C

.init
    add     x1, x0, 0
copy:
    vld     v1, [x1 + BIAS]
    sst     [x1 + BIAS_SP], v1
    add     x1, x1, 32
    bltu    x1, ROW_BYTES, copy
    exit

.main
    remc    x1, OFFSET, CHANNELS
    sld     v1, [x1 + BIAS_SP]
    vadd    v1, DATA, v1
    vmax    v1, v1, 0.0
    vstm.x  [OFFSET + Y], v1
