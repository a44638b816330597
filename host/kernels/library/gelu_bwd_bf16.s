.kernel gelu_bwd_bf16
; gelu_bwd on BF16 tensors: each half widened, dx = dy · GELU'(x) as gelu_bwd, the two
; results rounded once to BF16. Triggered by the writes of dy.
.arg X 0
.arg DX 1
.arg TWO_BETA 12         ; f32(2β)
.arg NEG_2BETA 13        ; f32(−2β)
.arg EXP_MAGIC 14        ; 1.5·2^23 + 191
.arg EXP_C4 15           ; c4·2^-64

.main
    vld     v7, [OFFSET + X]
    vcvtlo  v8, v7
    vcvthi  v9, v7
    vcvtlo  v12, DATA
    vcvthi  v13, DATA
    ; elements 0 … 7
    vmul    v6, v8, v8
    vfma    v1, v6, 0xbd922279, NEG_2BETA
    vabs    v2, v8
    vmul    v1, v2, v1
    vmax    v1, v1, -120.0
    vfma    v2, v1, 0x3fb8aa3b, EXP_MAGIC
    vsub    v3, v2, 0x4b4000bf
    vfnma   v1, v3, 0x3f317218, v1
    vfnma   v1, v3, 0xb102e308, v1
    vfma    v3, v1, 0x1c07d3be, EXP_C4
    vfma    v3, v3, v1, 0x1e2aad35
    vfma    v3, v3, v1, 0x1efffee1
    vfma    v3, v3, v1, 0x1f7ffffb
    vfma    v3, v3, v1, 0x1f800000
    vishl   v2, v2, 23
    vmul    v2, v3, v2
    vadd    v3, v2, 1.0
    vdiv    v3, 1.0, v3
    vmul    v2, v2, v3
    vcmplt  v4, v8, 0.0
    vsel    v4, v2, v3, v4
    vfma    v1, v6, 0x3e5b33b6, TWO_BETA
    vmul    v1, v1, v8
    vmul    v1, v1, v2
    vfma    v1, v1, v3, v4
    vmul    v10, v12, v1
    ; elements 8 … 15
    vmul    v6, v9, v9
    vfma    v1, v6, 0xbd922279, NEG_2BETA
    vabs    v2, v9
    vmul    v1, v2, v1
    vmax    v1, v1, -120.0
    vfma    v2, v1, 0x3fb8aa3b, EXP_MAGIC
    vsub    v3, v2, 0x4b4000bf
    vfnma   v1, v3, 0x3f317218, v1
    vfnma   v1, v3, 0xb102e308, v1
    vfma    v3, v1, 0x1c07d3be, EXP_C4
    vfma    v3, v3, v1, 0x1e2aad35
    vfma    v3, v3, v1, 0x1efffee1
    vfma    v3, v3, v1, 0x1f7ffffb
    vfma    v3, v3, v1, 0x1f800000
    vishl   v2, v2, 23
    vmul    v2, v3, v2
    vadd    v3, v2, 1.0
    vdiv    v3, 1.0, v3
    vmul    v2, v2, v3
    vcmplt  v4, v9, 0.0
    vsel    v4, v2, v3, v4
    vfma    v1, v6, 0x3e5b33b6, TWO_BETA
    vmul    v1, v1, v9
    vmul    v1, v1, v2
    vfma    v1, v1, v3, v4
    vmul    v11, v13, v1
    vpackbf v10, v10, v11
    vstm.x  [OFFSET + DX], v10
