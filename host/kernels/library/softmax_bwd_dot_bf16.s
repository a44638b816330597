.kernel softmax_bwd_dot_bf16
; softmax_bwd_dot on BF16 dy and y: dy_lo·y_lo + dy_hi·y_hi (the second by FMA) added
; into the row's copy (sector mod K) in trigger order; the finalizer is softmax_bwd_dot'.
.arg Y 0
.arg DOT_ROWS 1          ; per row: a sector of Σ dy·y
.arg ROWS 2              ; divisor descriptor of 2L
.arg PARTIAL_SHIFT 3        ; log2(32K)
.arg PARTIAL_MASK 4         ; 32K − 1
.arg DOTS_SP 5           ; the copies, rows·32K bytes
.arg ROW_COUNT 6

.init
    vsplat  v1, x0
    add     x1, x0, PARTIAL_MASK
    add     x1, x1, 1
    mul     x2, x1, ROW_COUNT
    add     x1, x0, DOTS_SP
    add     x2, x2, x1
clear:
    sst     [x1], v1
    add     x1, x1, 32
    bltu    x1, x2, clear
    exit

.main
    vld     v1, [OFFSET + Y]
    vcvtlo  v2, v1
    vcvthi  v3, v1
    vcvtlo  v4, DATA
    vcvthi  v5, DATA
    vmul    v2, v4, v2
    vfma    v2, v5, v3, v2
    divc    x1, OFFSET, ROWS
    shl     x1, x1, PARTIAL_SHIFT
    and     x2, OFFSET, PARTIAL_MASK
    add     x1, x1, x2
    samoadd.r.x [x1 + DOTS_SP], v2

.final
    add     x7, x0, PARTIAL_MASK
    add     x7, x7, 1
    add     x1, x0, 0
    add     x2, x0, DOTS_SP
row:
    add     x3, x2, x7
    sld     v1, [x2]
    add     x4, x2, 32
    bgeu    x4, x3, reduced
copies:
    sld     v3, [x4]
    vadd    v1, v1, v3
    add     x4, x4, 32
    bltu    x4, x3, copies
reduced:
    vredsum v1, v1
    shl     x5, x1, 5
    vst     [x5 + DOT_ROWS], v1
    add     x1, x1, 1
    add     x2, x2, x7
    bltu    x1, ROW_COUNT, row
    exit
