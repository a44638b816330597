.kernel bn_bwd_stats
; Batch-norm backward, reductions, on the writes of dy (channels innermost, as bn_stats):
; Σdy and Σdy·x per channel in K copies. The finalizer adds the copies in ascending order,
; writes grad_weight = Σdy·(x − mean)·invstd and grad_bias = Σdy, and the coefficients
; of dx = a·dy + (b·x + c): a = invstd·weight, k = Σdy·(x − mean)·invstd² / n,
; b = −(a·k), c = a·(k·mean − Σdy/n).
.arg X 0
.arg GROUPS 1            ; divisor descriptor of 4C·K
.arg DOTS_SP 2           ; the Σdy·x copies, 4C·K bytes; the Σdy copies follow
.arg PARTIALS_BYTES 3        ; 4C·K
.arg ROW_BYTES 4         ; 4C
.arg MEAN 5
.arg INVSTD 6
.arg WEIGHT 7
.arg GRAD_WEIGHT 8
.arg GRAD_BIAS 9
.arg COEF_A 10
.arg COEF_B 11
.arg COEF_C 12
.arg COUNT 13            ; rows, as FP32

.init
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
    remc    x1, OFFSET, GROUPS
    vld     v1, [OFFSET + X]
    add     x1, x1, DOTS_SP
    samofma [x1], DATA, v1
    samoadd.r.x [x1 + PARTIALS_BYTES], DATA

.final
    add     x6, x0, DOTS_SP
    add     x6, x6, PARTIALS_BYTES
    add     x1, x0, 0
group:
    add     x2, x1, DOTS_SP
    sld     v1, [x2]                   ; Σdy·x
    sld     v2, [x2 + PARTIALS_BYTES]      ; Σdy
    jump    next
copies:
    sld     v3, [x2]
    vadd    v1, v1, v3
    sld     v3, [x2 + PARTIALS_BYTES]
    vadd    v2, v2, v3
next:
    add     x2, x2, ROW_BYTES
    bltu    x2, x6, copies
    vld     v3, [x1 + MEAN]
    vld     v4, [x1 + INVSTD]
    vfnma   v1, v3, v2, v1             ; Σdy·(x − mean) = Σdy·x − mean·Σdy
    vmul    v5, v1, v4
    vst     [x1 + GRAD_WEIGHT], v5
    vst     [x1 + GRAD_BIAS], v2
    vmul    v5, v5, v4
    vdiv    v5, v5, COUNT              ; k
    vdiv    v6, v2, COUNT              ; Σdy / n
    vld     v7, [x1 + WEIGHT]
    vmul    v7, v4, v7                 ; a
    vst     [x1 + COEF_A], v7
    vmul    v8, v7, v5
    vneg    v8, v8                     ; b
    vst     [x1 + COEF_B], v8
    vfms    v6, v5, v3, v6             ; k·mean − Σdy/n
    vmul    v6, v7, v6                 ; c
    vst     [x1 + COEF_C], v6
    add     x1, x1, 32
    bltu    x1, ROW_BYTES, group
    exit
