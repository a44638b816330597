.kernel softmax_max_bf16
; softmax_max on BF16 x (L a multiple of 16): the maximum of a sector's halves, then as
; softmax_max.
.arg MAX_ROWS 0          ; per row: a sector of its maximum
.arg ROWS 1              ; divisor descriptor of 2L
.arg PARTIAL_SHIFT 2        ; log2(32K)
.arg PARTIAL_MASK 3         ; 32K − 1
.arg MAX_SP 4            ; the copies, rows·32K bytes
.arg PARTIALS_BYTES 5      ; rows·32K
.arg ROW_COUNT 6

.init
    vsplat  v1, x0
    vadd    v1, v1, -inf
    add     x1, x0, MAX_SP
    add     x2, x1, PARTIALS_BYTES
fill:
    sst     [x1], v1
    add     x1, x1, 32
    bltu    x1, x2, fill
    exit

.main
    vcvtlo  v1, DATA
    vcvthi  v2, DATA
    vmax    v1, v1, v2
    divc    x1, OFFSET, ROWS
    shl     x1, x1, PARTIAL_SHIFT
    and     x2, OFFSET, PARTIAL_MASK
    add     x1, x1, x2
    samomax.r.x [x1 + MAX_SP], v1

.final
    add     x7, x0, PARTIAL_MASK
    add     x7, x7, 1
    add     x1, x0, 0
    add     x2, x0, MAX_SP
row:
    add     x3, x2, x7
    sld     v1, [x2]
    add     x4, x2, 32
    bgeu    x4, x3, reduced
copies:
    sld     v3, [x4]
    vmax    v1, v1, v3
    add     x4, x4, 32
    bltu    x4, x3, copies
reduced:
    vredmax v1, v1
    shl     x5, x1, 5
    vst     [x5 + MAX_ROWS], v1
    add     x1, x1, 1
    add     x2, x2, x7
    bltu    x1, ROW_COUNT, row
    exit
