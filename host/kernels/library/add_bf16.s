.kernel add_bf16
; add on BF16 tensors: y = a + b, rounded once to BF16; triggered by the writes of a.
.arg B 0
.arg Y 1

.main
    vld     v1, [OFFSET + B]
    vcvtlo  v2, DATA
    vcvthi  v3, DATA
    vcvtlo  v4, v1
    vcvthi  v5, v1
    vadd    v2, v2, v4
    vadd    v3, v3, v5
    vpackbf v2, v2, v3
    vstm.x  [OFFSET + Y], v2
