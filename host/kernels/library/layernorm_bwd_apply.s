.kernel layernorm_bwd_apply
; Layer-norm backward on reads of dy: dx = a·(dy·gamma) + (b·x + c) with the row
; coefficients of layernorm_bwd_stats, and the parameter gradients per column,
; grad_weight = Σ dy·x̂ and grad_bias = Σ dy over the rows in trigger order, x̂ = a·x + m.
.arg DX 0
.arg X 1
.arg WEIGHT 2
.arg ROWS 3              ; divisor descriptor of 4L
.arg ROW_COEFS 4         ; per row: sectors of a, b, c, m
.arg WEIGHT_SP 5
.arg GRADS_SP 6          ; grad_weight accumulators, 4L bytes; grad_bias follow
.arg ROW_BYTES 7         ; 4L
.arg GRAD_WEIGHT 8
.arg GRAD_BIAS 9

.init
    vsplat  v2, x0
    add     x1, x0, 0
copy:
    vld     v1, [x1 + WEIGHT]
    sst     [x1 + WEIGHT_SP], v1
    add     x2, x1, GRADS_SP
    sst     [x2], v2
    sst     [x2 + ROW_BYTES], v2
    add     x1, x1, 32
    bltu    x1, ROW_BYTES, copy
    exit

.main
    divc    x1, OFFSET, ROWS
    remc    x2, OFFSET, ROWS
    shl     x1, x1, 7
    vld     v1, [OFFSET + X]
    vld     v2, [x1 + ROW_COEFS + 32]  ; b
    vld     v3, [x1 + ROW_COEFS + 64]  ; c
    vfma    v2, v1, v2, v3             ; b·x + c
    sld     v3, [x2 + WEIGHT_SP]
    vmul    v3, DATA, v3               ; g = dy·gamma
    vld     v4, [x1 + ROW_COEFS]       ; a
    vfma    v2, v3, v4, v2
    vstm    [OFFSET + DX], v2
    vld     v5, [x1 + ROW_COEFS + 96]  ; m
    vfma    v1, v1, v4, v5             ; x̂
    add     x3, x2, GRADS_SP
    samofma [x3], DATA, v1
    samoadd.r.x [x3 + ROW_BYTES], DATA

.final
    add     x1, x0, 0
write:
    add     x2, x1, GRADS_SP
    sld     v1, [x2]
    vst     [x1 + GRAD_WEIGHT], v1
    sld     v1, [x2 + ROW_BYTES]
    vst     [x1 + GRAD_BIAS], v1
    add     x1, x1, 32
    bltu    x1, ROW_BYTES, write
    exit
