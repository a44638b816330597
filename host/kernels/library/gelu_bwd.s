.kernel gelu_bwd
; dx = dy · GELU'(x) for the tanh form, with e = exp(−2|z|) as in gelu_fwd:
;   σ = σ(2z) = (x < 0 ? e : 1) / (1 + e),  σ(1 − σ) = e / (1 + e)²,
;   GELU'(x) = σ + 2β(1 + 3κx²)·x·σ(1 − σ)
; evaluated as q = 1/(1 + e), σ = (x < 0 ? e·q : q), h = 2β + 6βκ·x²,
; GELU' = ((h·x)·(e·q))·q + σ (the last step one rounding). Triggered by the writes of dy.
.arg X 0
.arg DX 1
.arg TWO_BETA 12         ; f32(2β)
.arg NEG_2BETA 13        ; f32(−2β)
.arg EXP_MAGIC 14        ; 1.5·2^23 + 191
.arg EXP_C4 15           ; c4·2^-64

.main
    vld     v5, [OFFSET + X]
    vmul    v6, v5, v5                       ; x²
    vfma    v1, v6, 0xbd922279, NEG_2BETA    ; −2β(1 + κx²)
    vabs    v2, v5
    vmul    v1, v2, v1                       ; a = −2|z|
    ; exp(a), as in gelu_fwd
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
    vmul    v2, v3, v2                       ; e
    ; GELU'(x)
    vadd    v3, v2, 1.0
    vdiv    v3, 1.0, v3                      ; q = 1/(1 + e)
    vmul    v2, v2, v3                       ; e·q
    vcmplt  v4, v5, 0.0
    vsel    v4, v2, v3, v4                   ; σ
    vfma    v1, v6, 0x3e5b33b6, TWO_BETA     ; h = 2β + 6βκ·x²; 0x3e5b33b6 = f32(6βκ)
    vmul    v1, v1, v5                       ; h·x
    vmul    v1, v1, v2                       ; (h·x)·(e·q)
    vfma    v1, v1, v3, v4                   ; ·q + σ
    vmul    v1, DATA, v1
    vstm.x  [OFFSET + DX], v1
