.kernel relu_bwd_bf16
; relu_bwd on BF16 tensors: dx = (y <= 0) ? +0 : dy.
.arg Y 0
.arg DX 1

.main
    vld     v1, [OFFSET + Y]
    vcvtlo  v2, v1
    vcvthi  v3, v1
    vcmple  v2, v2, 0.0
    vcmple  v3, v3, 0.0
    vcvtlo  v4, DATA
    vcvthi  v5, DATA
    vsel    v4, 0.0, v4, v2
    vsel    v5, 0.0, v5, v3
    vpackbf v4, v4, v5
    vstm.x  [OFFSET + DX], v4
