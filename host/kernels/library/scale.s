.kernel scale
; y = x · scale (a multiplication by a constant; its gradient is the same kernel on dy).
.arg Y 0
.arg SCALE 1

.main
    vmul    v1, DATA, SCALE
    vstm.x  [OFFSET + Y], v1
