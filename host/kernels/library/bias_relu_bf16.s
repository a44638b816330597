.kernel bias_relu_bf16
; bias_relu on BF16 activations (channels innermost, C a multiple of 16), the bias FP32:
; y = maximum(x + bias[c], +0) rounded once to BF16.
.arg Y 0
.arg BIAS 1              ; the bias in memory (C FP32)
.arg CHANNELS 2          ; divisor descriptor of 2C: OFFSET mod 2C = the BF16 channel bytes
.arg BIAS_SP 3
.arg ROW_BYTES 4         ; 4C: the FP32 bias

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
    shl     x1, x1, 1                  ; the FP32 bias' bytes
    sld     v1, [x1 + BIAS_SP]
    sld     v2, [x1 + BIAS_SP + 32]
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vadd    v1, v3, v1
    vadd    v2, v4, v2
    vmax    v1, v1, 0.0
    vmax    v2, v2, 0.0
    vpackbf v1, v1, v2
    vstm.x  [OFFSET + Y], v1
