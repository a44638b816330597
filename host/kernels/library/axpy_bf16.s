.kernel axpy_bf16
; Gradient accumulation of a BF16 gradient x into an FP32 accumulator y (mixed precision's
; FP32 main gradient): y = fma(x, alpha, y); a sector of x is two sectors of y.
.arg Y 0
.arg ALPHA 1

.main
    shl     x1, OFFSET, 1              ; FP32 elements take twice the bytes
    vld     v1, [x1 + Y]
    vld     v2, [x1 + Y + 32]
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vfma    v1, v3, ALPHA, v1
    vfma    v2, v4, ALPHA, v2
    vst     [x1 + Y], v1
    vst.x   [x1 + Y + 32], v2
