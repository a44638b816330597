.kernel layernorm_stats
; Layer-norm statistics on the producer's writes of x (rows × L, L a multiple of 8):
; per row, Σx and Σx² lane by lane in K copies (copy = sector mod K, K a power of two),
; so that consecutive sectors of a row update different addresses. The finalizer adds a
; row's copies in ascending order, then its lanes (vredsum's pairwise tree), and writes
; mean and rstd = 1/√(max(E[x²] − mean², 0) + eps) per row, and for layernorm_apply the
; row coefficients (rstd, −mean·rstd) as two broadcast sectors.
.arg MEAN 0
.arg RSTD 1
.arg ROW_COEFS 2         ; per row: a sector of rstd, a sector of −mean·rstd (64 bytes)
.arg ROWS 3              ; divisor descriptor of 4L: OFFSET ÷ 4L = the row
.arg PARTIAL_SHIFT 4        ; log2(32K)
.arg PARTIAL_MASK 5         ; 32K − 1: OFFSET & PARTIAL_MASK = 32 × (sector mod K)
.arg SQUARES_SP 6        ; the Σx² copies, rows·32K bytes; the Σx copies follow
.arg PARTIALS_BYTES 7        ; rows·32K
.arg ROW_COUNT 8         ; rows
.arg LENGTH 9            ; L, as FP32
.arg EPS 10

.init
    vsplat  v1, x0
    add     x1, x0, SQUARES_SP
    add     x2, x1, PARTIALS_BYTES
    add     x2, x2, PARTIALS_BYTES
clear:
    sst     [x1], v1
    add     x1, x1, 32
    bltu    x1, x2, clear
    exit

.main
    divc    x1, OFFSET, ROWS
    shl     x1, x1, PARTIAL_SHIFT
    and     x2, OFFSET, PARTIAL_MASK
    add     x1, x1, x2
    add     x1, x1, SQUARES_SP
    samofma [x1], DATA, DATA
    samoadd.r.x [x1 + PARTIALS_BYTES], DATA

.final
    add     x7, x0, PARTIAL_MASK
    add     x7, x7, 1                  ; 32K: one row's copies
    add     x1, x0, 0                  ; the row
    add     x2, x0, SQUARES_SP         ; its first copy
row:
    add     x3, x2, x7                 ; the end of its copies
    sld     v1, [x2]
    sld     v2, [x2 + PARTIALS_BYTES]
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
    vdiv    v2, v2, LENGTH             ; mean
    vdiv    v1, v1, LENGTH             ; E[x²]
    vfnma   v1, v2, v2, v1
    vmax    v1, v1, 0.0
    vadd    v1, v1, EPS
    vrsqrt  v1, v1                     ; rstd
    vmul    v3, v2, v1
    vneg    v3, v3                     ; −mean·rstd
    shl     x5, x1, 2
    vget    x6, v2, x0
    sw      [x5 + MEAN], x6
    vget    x6, v1, x0
    sw      [x5 + RSTD], x6
    shl     x5, x1, 6
    vst     [x5 + ROW_COEFS], v1
    vst     [x5 + ROW_COEFS + 32], v3
    add     x1, x1, 1
    add     x2, x2, x7
    bltu    x1, ROW_COUNT, row
    exit
