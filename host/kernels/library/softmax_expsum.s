.kernel softmax_expsum
; Softmax, phase 2, on reads of x: e = exp(x − max) (the library's exponential) stored
; to y, and the row sums of e lane by lane (in trigger order). The finalizer adds a
; row's lanes (vredsum's tree) and writes 1/sum as a broadcast sector per row.
.arg Y 0
.arg MAX_ROWS 1          ; per row: a sector of its maximum (softmax_max)
.arg INV_ROWS 2          ; per row: a sector of 1/Σe
.arg ROWS 3              ; divisor descriptor of 4L
.arg SUMS_SP 4           ; the row sums, rows·32 bytes
.arg ROW_COUNT 5
.arg EXP_MAGIC 14        ; 1.5·2^23 + 191
.arg EXP_C4 15           ; c4·2^-64

.init
    vsplat  v1, x0
    shl     x2, ROW_COUNT, 5
    add     x1, x0, 0
clear:
    sst     [x1 + SUMS_SP], v1
    add     x1, x1, 32
    bltu    x1, x2, clear
    exit

.main
    divc    x1, OFFSET, ROWS
    shl     x1, x1, 5
    vld     v1, [x1 + MAX_ROWS]
    vsub    v1, DATA, v1               ; a = x − max ≤ 0
    ; exp(a), a ≤ 0: a = n·ln2 + r, e^a = 2^(n+64) · (p(r)·2^-64)
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
    vmul    v2, v3, v2                 ; e
    vstm    [OFFSET + Y], v2
    samoadd.r.x [x1 + SUMS_SP], v2

.final
    shl     x2, ROW_COUNT, 5
    add     x1, x0, 0
row:
    sld     v1, [x1 + SUMS_SP]
    vredsum v1, v1
    vdiv    v1, 1.0, v1
    vst     [x1 + INV_ROWS], v1
    add     x1, x1, 32
    bltu    x1, x2, row
    exit
