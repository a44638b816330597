.kernel tanh_bwd
; dx = dy · (1 − y²), 1 − y² rounded once; triggered by the writes of dy.
.arg Y 0
.arg DX 1

.main
    vld     v1, [OFFSET + Y]
    vfnma   v1, v1, v1, 1.0
    vmul    v1, DATA, v1
    vstm.x  [OFFSET + DX], v1
