.kernel softmax_scale
; Softmax, phase 3, on reads of y (holding e): y = e · (1/Σe), stored in place.
.arg INV_ROWS 0          ; per row: a sector of 1/Σe (softmax_expsum)
.arg ROWS 1              ; divisor descriptor of 4L

.main
    divc    x1, OFFSET, ROWS
    shl     x1, x1, 5
    vld     v1, [x1 + INV_ROWS]
    vmul    v1, DATA, v1
    vstm.x  [ADDR], v1
