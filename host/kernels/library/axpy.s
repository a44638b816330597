.kernel axpy
; y = y + alpha · x with one rounding (gradient accumulation, torch's y.add_(x, alpha=alpha)),
; triggered by the writes of x.
.arg Y 0
.arg ALPHA 1

.main
    vld     v1, [OFFSET + Y]
    vfma    v1, DATA, ALPHA, v1
    vstm.x  [OFFSET + Y], v1
