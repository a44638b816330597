.kernel gelu_fwd
; GELU, tanh form: y = 0.5·x·(1 + tanh z), z = β(x + κx³), computed as y = x·σ(2z):
;   a = −2|z| = |x|·(−2β − 2βκ·x²) ≤ 0,  e = exp(a)  (the library's exponential, below),
;   y = x / (1 + e) for x ≥ 0 and y = (x·e) / (1 + e) for x < 0,
; so nothing cancels and exp never overflows. β = f32(√(2/π)), κ = f32(0.044715).
.arg Y 0
.arg NEG_2BETA 13        ; f32(−2β)
.arg EXP_MAGIC 14        ; 1.5·2^23 + 191
.arg EXP_C4 15           ; c4·2^-64

.main
    vmul    v1, DATA, DATA
    vfma    v1, v1, 0xbd922279, NEG_2BETA    ; −2β(1 + κx²); 0xbd922279 = f32(−2βκ)
    vabs    v2, DATA
    vmul    v1, v2, v1                       ; a = −2|z|
    ; exp(a), a ≤ 0: a = n·ln2 + r, e^a = 2^(n+64) · (p(r)·2^-64)
    vmax    v1, v1, -120.0                   ; e^-120 rounds to 0; clamps −inf
    vfma    v2, v1, 0x3fb8aa3b, EXP_MAGIC    ; t = a·log2 e + magic: n in the low bits
    vsub    v3, v2, 0x4b4000bf               ; n
    vfnma   v1, v3, 0x3f317218, v1           ; r = a − n·ln2_hi, exact
    vfnma   v1, v3, 0xb102e308, v1           ; r −= n·ln2_lo
    vfma    v3, v1, 0x1c07d3be, EXP_C4       ; p(r)·2^-64, Horner, degree 5
    vfma    v3, v3, v1, 0x1e2aad35
    vfma    v3, v3, v1, 0x1efffee1
    vfma    v3, v3, v1, 0x1f7ffffb
    vfma    v3, v3, v1, 0x1f800000
    vishl   v2, v2, 23                       ; 2^(n+64): t's low 9 bits are n + 191
    vmul    v2, v3, v2                       ; e, one rounding (subnormals exact)
    ; y = x·σ(2z)
    vmul    v3, DATA, v2
    vcmplt  v4, DATA, 0.0
    vsel    v3, v3, DATA, v4
    vadd    v2, v2, 1.0
    vdiv    v3, v3, v2
    vstm.x  [OFFSET + Y], v3
