.kernel layernorm_bwd_apply_bf16
; layernorm_bwd_apply on BF16 dy, x and dx: dx = fma(dy·gamma, a, fma(x, b, c)) in FP32,
; rounded once; grad_weight and grad_bias per column in FP32, as layernorm_bwd_apply
; accumulates the widened tensors' sectors 2s and 2s+1.
.arg DX 0
.arg X 1
.arg WEIGHT 2
.arg ROWS 3              ; divisor descriptor of 2L
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
    shl     x2, x2, 1                  ; the FP32 columns' bytes
    vld     v1, [OFFSET + X]
    vcvtlo  v2, v1
    vcvthi  v3, v1
    vld     v4, [x1 + ROW_COEFS + 32]  ; b
    vld     v5, [x1 + ROW_COEFS + 64]  ; c
    vfma    v6, v2, v4, v5
    vfma    v7, v3, v4, v5
    vld     v4, [x1 + ROW_COEFS]       ; a
    vcvtlo  v8, DATA
    vcvthi  v9, DATA
    sld     v10, [x2 + WEIGHT_SP]
    sld     v11, [x2 + WEIGHT_SP + 32]
    vmul    v10, v8, v10               ; g = dy·gamma
    vmul    v11, v9, v11
    vfma    v6, v10, v4, v6
    vfma    v7, v11, v4, v7
    vpackbf v6, v6, v7
    vstm    [OFFSET + DX], v6
    vld     v5, [x1 + ROW_COEFS + 96]  ; m
    vfma    v2, v2, v4, v5             ; x̂
    vfma    v3, v3, v4, v5
    add     x3, x2, GRADS_SP
    samofma [x3], v8, v2
    samofma [x3 + 32], v9, v3
    samoadd [x3 + ROW_BYTES], v8
    samoadd.r.x [x3 + ROW_BYTES + 32], v9

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
