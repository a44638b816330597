.kernel layernorm_bwd_stats_bf16
; layernorm_bwd_stats on BF16 dy and x: with g = dy·gamma per half, a sector adds
; g_lo·x_lo + g_hi·x_hi (the second by FMA) and g_lo + g_hi into the row's copy (sector
; mod K) in trigger order; the finalizer is layernorm_bwd_stats'.
.arg X 0
.arg WEIGHT 1
.arg ROWS 2              ; divisor descriptor of 2L
.arg PARTIAL_SHIFT 3        ; log2(32K)
.arg PARTIAL_MASK 4         ; 32K − 1
.arg WEIGHT_SP 5
.arg DOTS_SP 6           ; the Σg·x copies, rows·32K bytes; the Σg copies follow
.arg PARTIALS_BYTES 7        ; rows·32K
.arg ROW_BYTES 8         ; 4L
.arg ROW_COUNT 9
.arg MEAN 10
.arg RSTD 11
.arg ROW_COEFS 12        ; per row: sectors of a, b, c, m (128 bytes)
.arg INV_LENGTH 13       ; f32(1/L)
.arg SUMS_SP 14        ; DOTS_SP + PARTIALS_BYTES

.init
    add     x1, x0, 0
copy:
    vld     v1, [x1 + WEIGHT]
    sst     [x1 + WEIGHT_SP], v1
    add     x1, x1, 32
    bltu    x1, ROW_BYTES, copy
    vsplat  v1, x0
    add     x1, x0, DOTS_SP
    add     x2, x1, PARTIALS_BYTES
    add     x2, x2, PARTIALS_BYTES
clear:
    sst     [x1], v1
    add     x1, x1, 32
    bltu    x1, x2, clear
    exit

.main
    divc    x1, OFFSET, ROWS
    remc    x2, OFFSET, ROWS
    shl     x2, x2, 1
    sld     v1, [x2 + WEIGHT_SP]
    sld     v2, [x2 + WEIGHT_SP + 32]
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vmul    v1, v3, v1                 ; g = dy·gamma
    vmul    v2, v4, v2
    vld     v5, [OFFSET + X]
    vcvtlo  v3, v5
    vcvthi  v4, v5
    vmul    v3, v1, v3
    vfma    v3, v2, v4, v3
    vadd    v4, v1, v2
    shl     x1, x1, PARTIAL_SHIFT
    and     x3, OFFSET, PARTIAL_MASK
    add     x1, x1, x3
    samoadd [x1 + DOTS_SP], v3
    samoadd.r.x [x1 + SUMS_SP], v4

.final
    add     x7, x0, PARTIAL_MASK
    add     x7, x7, 1
    add     x1, x0, 0
    add     x2, x0, DOTS_SP
row:
    add     x3, x2, x7
    sld     v1, [x2]                   ; ds
    sld     v2, [x2 + PARTIALS_BYTES]      ; db
    add     x4, x2, 32
    bgeu    x4, x3, reduced
copies:
    sld     v3, [x4]
    vadd    v1, v1, v3
    sld     v3, [x4 + PARTIALS_BYTES]
    vadd    v2, v2, v3
    add     x4, x4, 32
    bltu    x4, x3, copies
reduced:
    vredsum v1, v1
    vredsum v2, v2
    shl     x5, x1, 2
    lw      x6, [x5 + MEAN]
    vsplat  v3, x6
    lw      x6, [x5 + RSTD]
    vsplat  v4, x6                     ; a
    vfms    v5, v2, v3, v1             ; db·mean − ds
    vmul    v5, v5, v4
    vmul    v5, v5, v4
    vmul    v5, v5, v4
    vmul    v5, v5, INV_LENGTH         ; b
    vmul    v6, v2, v4
    vmul    v6, v6, INV_LENGTH
    vneg    v6, v6
    vfnma   v6, v5, v3, v6             ; c
    vmul    v7, v3, v4
    vneg    v7, v7                     ; m
    shl     x5, x1, 7
    vst     [x5 + ROW_COEFS], v4
    vst     [x5 + ROW_COEFS + 32], v5
    vst     [x5 + ROW_COEFS + 64], v6
    vst     [x5 + ROW_COEFS + 96], v7
    add     x1, x1, 1
    add     x2, x2, x7
    bltu    x1, ROW_COUNT, row
    exit
