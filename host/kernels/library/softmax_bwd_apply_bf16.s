.kernel softmax_bwd_apply_bf16
; softmax_bwd_apply on BF16 tensors: dx = (dy − Σ dy·y)·y in FP32, rounded once.
.arg DX 0
.arg Y 1
.arg DOT_ROWS 2          ; per row: a sector of Σ dy·y (softmax_bwd_dot)
.arg ROWS 3              ; divisor descriptor of 2L

.main
    divc    x1, OFFSET, ROWS
    shl     x1, x1, 5
    vld     v1, [x1 + DOT_ROWS]
    vcvtlo  v2, DATA
    vcvthi  v3, DATA
    vsub    v2, v2, v1
    vsub    v3, v3, v1
    vld     v4, [OFFSET + Y]
    vcvtlo  v5, v4
    vcvthi  v6, v4
    vmul    v2, v2, v5
    vmul    v3, v3, v6
    vpackbf v2, v2, v3
    vstm.x  [OFFSET + DX], v2
