.kernel tanh_bwd_bf16
; tanh_bwd on BF16 tensors: dx = dy · fma(−y, y, 1).
.arg Y 0
.arg DX 1

.main
    vld     v1, [OFFSET + Y]
    vcvtlo  v2, v1
    vcvthi  v3, v1
    vfnma   v2, v2, v2, 1.0
    vfnma   v3, v3, v3, 1.0
    vcvtlo  v4, DATA
    vcvthi  v5, DATA
    vmul    v2, v4, v2
    vmul    v3, v5, v3
    vpackbf v2, v2, v3
    vstm.x  [OFFSET + DX], v2
