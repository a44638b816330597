.kernel add
; y = a + b, triggered by the writes of a.
.arg B 0
.arg Y 1

.main
    vld     v1, [OFFSET + B]
    vadd    v1, DATA, v1
    vstm.x  [OFFSET + Y], v1
