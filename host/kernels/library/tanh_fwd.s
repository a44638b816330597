.kernel tanh_fwd
; y = tanh x = sign(x) · (−m)/(2 + m), m = expm1(−2|x|) ∈ (−1, 0] (no cancellation):
;   −2|x| = n·ln2 + r,  expm1 = s·(1 + r + r²q(r)) − 1 with s = 2^n, evaluated in
;   u = −r/2 as S = −2s (from the exponent bits), m'' = u + u²·Q(u), Q(u) = −2q(−2u),
;   expm1 = S·m'' − (1 − s): one rounding, exact 0 at x = 0.
; |x| is clamped to 9.5, where tanh already rounds to 1.
.arg Y 0
.arg EXPM1_MAGIC 13      ; 1.5·2^23 + 384
.arg EXPM1_Q3 14         ; Q3
.arg ONE 15              ; 1.0

.main
    vabs    v1, DATA
    vmin    v1, v1, 9.5
    vfma    v2, v1, 0xc038aa3b, EXPM1_MAGIC  ; t = −2|x|·log2 e + magic: n in the low bits
    vsub    v3, v2, 0x4b400180               ; n
    vfma    v1, v3, 0x3eb17218, v1           ; u = |x| + n·ln2_hi/2, exact
    vfma    v1, v3, 0xb082e308, v1           ; u += n·ln2_lo/2
    vmul    v4, v1, v1                       ; u²
    vfma    v5, v1, 0xbd36350e, EXPM1_Q3     ; Q(u), Horner, degree 4
    vfma    v5, v5, v1, 0xbeaaaadd
    vfma    v5, v5, v1, 0x3f2aaa6e
    vfma    v5, v5, v1, 0xbf800000
    vfma    v5, v4, v5, v1                   ; m'' = u + u²·Q(u)
    vishl   v2, v2, 23                       ; S = −2^(n+1): t's low 9 bits are n + 384
    vfma    v3, v2, 0.5, ONE                 ; 1 − s
    vfms    v5, v2, v5, v3                   ; m = expm1(−2|x|)
    vsub    v3, -2.0, v5                     ; −(2 + m)
    vdiv    v5, v5, v3                       ; tanh |x|
    viand   v3, DATA, 0x80000000
    vior    v5, v5, v3                       ; the sign of x
    vstm.x  [OFFSET + Y], v5
