.kernel softmax_bwd_apply
; Softmax backward, phase 2, on reads of dy: dx = y·(dy − Σ dy·y).
.arg DX 0
.arg Y 1
.arg DOT_ROWS 2          ; per row: a sector of Σ dy·y (softmax_bwd_dot)
.arg ROWS 3              ; divisor descriptor of 4L

.main
    divc    x1, OFFSET, ROWS
    shl     x1, x1, 5
    vld     v1, [x1 + DOT_ROWS]
    vsub    v1, DATA, v1
    vld     v2, [OFFSET + Y]
    vmul    v1, v1, v2
    vstm.x  [OFFSET + DX], v1
