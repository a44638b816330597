.kernel softmax_scale_bf16
; Softmax, phase 3, BF16: on reads of x (the pass over the tensor; its data is not used),
; y = e · (1/Σe) from the FP32 exponentials of softmax_expsum_bf16, rounded once to BF16.
.arg Y 0
.arg EXPS 1              ; FP32, rows × L
.arg INV_ROWS 2          ; per row: a sector of 1/Σe
.arg ROWS 3              ; divisor descriptor of 2L

.main
    divc    x1, OFFSET, ROWS
    shl     x1, x1, 5
    vld     v1, [x1 + INV_ROWS]
    shl     x2, OFFSET, 1
    vld     v2, [x2 + EXPS]
    vld     v3, [x2 + EXPS + 32]
    vmul    v2, v2, v1
    vmul    v3, v3, v1
    vpackbf v2, v2, v3
    vstm.x  [OFFSET + Y], v2
