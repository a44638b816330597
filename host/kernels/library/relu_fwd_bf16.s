.kernel relu_fwd_bf16
; relu_fwd on BF16 tensors (16 elements a sector): widened, maximum(x, +0), rounded back.
.arg Y 0

.main
    vcvtlo  v1, DATA
    vcvthi  v2, DATA
    vmax    v1, v1, 0.0
    vmax    v2, v2, 0.0
    vpackbf v1, v1, v2
    vstm.x  [OFFSET + Y], v1
