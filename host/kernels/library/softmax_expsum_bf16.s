.kernel softmax_expsum_bf16
; softmax_expsum on BF16 x: e = exp(x − max) per half, stored in FP32 (exps, twice the
; bytes), and e_lo + e_hi added into the row sum in trigger order; the finalizer is
; softmax_expsum'. softmax_scale_bf16 rounds y once from these FP32 exponentials.
.arg EXPS 0             ; FP32, rows × L
.arg MAX_ROWS 1          ; per row: a sector of its maximum (softmax_max)
.arg INV_ROWS 2          ; per row: a sector of 1/Σe
.arg ROWS 3              ; divisor descriptor of 2L
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
    vld     v9, [x1 + MAX_ROWS]
    shl     x2, OFFSET, 1              ; the FP32 exponentials' bytes
    vcvtlo  v1, DATA
    vsub    v1, v1, v9
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
    vmul    v10, v3, v2
    vst     [x2 + EXPS], v10
    vcvthi  v1, DATA
    vsub    v1, v1, v9
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
    vmul    v11, v3, v2
    vst     [x2 + EXPS + 32], v11
    vadd    v10, v10, v11
    samoadd.r.x [x1 + SUMS_SP], v10

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
