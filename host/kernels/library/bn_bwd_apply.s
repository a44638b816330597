.kernel bn_bwd_apply
; Batch-norm backward, dx = a·dy + (b·x + c) per channel (the coefficients bn_bwd_stats
; wrote, copied into the scratchpad by the initializer), on reads of dy.
.arg DX 0
.arg X 1
.arg COEF_A 2
.arg COEF_B 3
.arg COEF_C 4
.arg CHANNELS 5          ; divisor descriptor of 4C
.arg COEF_A_SP 6
.arg COEF_B_SP 7
.arg COEF_C_SP 8
.arg ROW_BYTES 9         ; 4C

.init
    add     x1, x0, 0
copy:
    vld     v1, [x1 + COEF_A]
    sst     [x1 + COEF_A_SP], v1
    vld     v1, [x1 + COEF_B]
    sst     [x1 + COEF_B_SP], v1
    vld     v1, [x1 + COEF_C]
    sst     [x1 + COEF_C_SP], v1
    add     x1, x1, 32
    bltu    x1, ROW_BYTES, copy
    exit

.main
    remc    x1, OFFSET, CHANNELS
    vld     v1, [OFFSET + X]
    sld     v2, [x1 + COEF_B_SP]
    sld     v3, [x1 + COEF_C_SP]
    vfma    v1, v1, v2, v3
    sld     v2, [x1 + COEF_A_SP]
    vfma    v1, DATA, v2, v1
    vstm.x  [OFFSET + DX], v1
