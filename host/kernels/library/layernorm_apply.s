.kernel layernorm_apply
; y = (x·rstd + (−mean·rstd))·gamma + beta, both steps one rounding (rows × L), on reads
; of x; the row coefficients layernorm_stats wrote, gamma and beta copied into the
; scratchpad by the initializer.
.arg Y 0
.arg ROW_COEFS 1         ; per row: a sector of rstd, a sector of −mean·rstd
.arg ROWS 2              ; divisor descriptor of 4L
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
    remc    x2, OFFSET, ROWS           ; the column group's bytes
    shl     x1, x1, 6
    vld     v1, [x1 + ROW_COEFS]
    vld     v2, [x1 + ROW_COEFS + 32]
    vfma    v1, DATA, v1, v2           ; x̂
    sld     v2, [x2 + WEIGHT_SP]
    sld     v3, [x2 + BIAS_SP]
    vfma    v1, v1, v2, v3
    vstm.x  [OFFSET + Y], v1
