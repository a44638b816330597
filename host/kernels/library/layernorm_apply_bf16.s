.kernel layernorm_apply_bf16
; layernorm_apply on BF16 x and y: y = fma(fma(x, rstd, −mean·rstd), gamma, beta) in
; FP32, rounded once (gamma and beta FP32).
.arg Y 0
.arg ROW_COEFS 1         ; per row: a sector of rstd, a sector of −mean·rstd
.arg ROWS 2              ; divisor descriptor of 2L
.arg WEIGHT 3
.arg BIAS 4
.arg WEIGHT_SP 5
.arg BIAS_SP 6
.arg ROW_BYTES 7         ; 4L

.init
    add     x1, x0, 0
copy:
    vld     v1, [x1 + WEIGHT]
    sst     [x1 + WEIGHT_SP], v1
    vld     v1, [x1 + BIAS]
    sst     [x1 + BIAS_SP], v1
    add     x1, x1, 32
    bltu    x1, ROW_BYTES, copy
    exit

.main
    divc    x1, OFFSET, ROWS
    remc    x2, OFFSET, ROWS
    shl     x1, x1, 6
    shl     x2, x2, 1                  ; the FP32 gamma and beta bytes
    vld     v1, [x1 + ROW_COEFS]
    vld     v2, [x1 + ROW_COEFS + 32]
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vfma    v3, v3, v1, v2
    vfma    v4, v4, v1, v2
    sld     v1, [x2 + WEIGHT_SP]
    sld     v2, [x2 + BIAS_SP]
    vfma    v3, v3, v1, v2
    sld     v1, [x2 + WEIGHT_SP + 32]
    sld     v2, [x2 + BIAS_SP + 32]
    vfma    v4, v4, v1, v2
    vpackbf v3, v3, v4
    vstm.x  [OFFSET + Y], v3
