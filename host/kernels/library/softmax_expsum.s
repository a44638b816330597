.kernel softmax_expsum
; Softmax, phase 2, on reads of x: e = exp(x − max) (the library's exponential, exp.inc)
; stored to y, and the row sums of e lane by lane (in trigger order). The finalizer adds a
; row's lanes (vredsum's tree) and writes 1/sum as a broadcast sector per row.
.arg Y 0
.include "exp.inc"
.include "softmax.inc"
    softmax_expsum_arguments

.init
    softmax_expsum_initializer

.main
    divc    x1, OFFSET, ROWS
    shl     x1, x1, 5
    vld     v1, [x1 + MAX_ROWS]
    vsub    v1, DATA, v1               ; a = x − max ≤ 0
    exp     v2, v1, v2, v3
    vstm    [OFFSET + Y], v2
    samoadd.r.x [x1 + SUMS_SP], v2

.final
    softmax_expsum_finalizer
