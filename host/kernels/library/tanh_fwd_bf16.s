.kernel tanh_fwd_bf16
; tanh_fwd on BF16 tensors: each half widened, tanh as tanh_fwd, the two results rounded
; once to BF16.
.arg Y 0
.arg EXPM1_MAGIC 13      ; 1.5·2^23 + 384
.arg EXPM1_Q3 14         ; Q3
.arg ONE 15              ; 1.0

.main
    vcvtlo  v8, DATA
    vcvthi  v9, DATA
    ; elements 0 … 7
    vabs    v1, v8
    vmin    v1, v1, 9.5
    vfma    v2, v1, 0xc038aa3b, EXPM1_MAGIC
    vsub    v3, v2, 0x4b400180
    vfma    v1, v3, 0x3eb17218, v1
    vfma    v1, v3, 0xb082e308, v1
    vmul    v4, v1, v1
    vfma    v5, v1, 0xbd36350e, EXPM1_Q3
    vfma    v5, v5, v1, 0xbeaaaadd
    vfma    v5, v5, v1, 0x3f2aaa6e
    vfma    v5, v5, v1, 0xbf800000
    vfma    v5, v4, v5, v1
    vishl   v2, v2, 23
    vfma    v3, v2, 0.5, ONE
    vfms    v5, v2, v5, v3
    vsub    v3, -2.0, v5
    vdiv    v5, v5, v3
    viand   v3, v8, 0x80000000
    vior    v10, v5, v3
    ; elements 8 … 15
    vabs    v1, v9
    vmin    v1, v1, 9.5
    vfma    v2, v1, 0xc038aa3b, EXPM1_MAGIC
    vsub    v3, v2, 0x4b400180
    vfma    v1, v3, 0x3eb17218, v1
    vfma    v1, v3, 0xb082e308, v1
    vmul    v4, v1, v1
    vfma    v5, v1, 0xbd36350e, EXPM1_Q3
    vfma    v5, v5, v1, 0xbeaaaadd
    vfma    v5, v5, v1, 0x3f2aaa6e
    vfma    v5, v5, v1, 0xbf800000
    vfma    v5, v4, v5, v1
    vishl   v2, v2, 23
    vfma    v3, v2, 0.5, ONE
    vfms    v5, v2, v5, v3
    vsub    v3, -2.0, v5
    vdiv    v5, v5, v3
    viand   v3, v9, 0x80000000
    vior    v11, v5, v3
    vpackbf v10, v10, v11
    vstm.x  [OFFSET + Y], v10
