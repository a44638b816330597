.kernel scale_bf16
; scale on BF16 tensors: y = x · scale, rounded once to BF16.
.arg Y 0
.arg SCALE 1

.main
    vcvtlo  v1, DATA
    vcvthi  v2, DATA
    vmul    v1, v1, SCALE
    vmul    v2, v2, SCALE
    vpackbf v1, v1, v2
    vstm.x  [OFFSET + Y], v1
