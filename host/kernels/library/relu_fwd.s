.kernel relu_fwd
; y = maximum(x, +0) on the producer's writes of x (-0 gives +0, NaN stays NaN).
.arg Y 0

.main
    vmax    v1, DATA, 0.0
    vstm.x  [OFFSET + Y], v1
