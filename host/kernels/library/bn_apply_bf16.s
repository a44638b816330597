.kernel bn_apply_bf16
; bn_apply on BF16 activations: y = fma(x, scale[c], shift[c]) in FP32, rounded once.
.arg Y 0
.arg SCALE 1
.arg SHIFT 2
.arg CHANNELS 3          ; divisor descriptor of 2C
.arg SCALE_SP 4
.arg SHIFT_SP 5
.arg ROW_BYTES 6         ; 4C

.init
    add     x1, x0, 0
copy:
    vld     v1, [x1 + SCALE]
    sst     [x1 + SCALE_SP], v1
    vld     v1, [x1 + SHIFT]
    sst     [x1 + SHIFT_SP], v1
    add     x1, x1, 32
    bltu    x1, ROW_BYTES, copy
    exit

.main
    remc    x1, OFFSET, CHANNELS
    shl     x1, x1, 1                  ; the FP32 coefficients' bytes
    sld     v1, [x1 + SCALE_SP]
    sld     v2, [x1 + SCALE_SP + 32]
    sld     v3, [x1 + SHIFT_SP]
    sld     v4, [x1 + SHIFT_SP + 32]
    vcvtlo  v5, DATA
    vcvthi  v6, DATA
    vfma    v5, v5, v1, v3
    vfma    v6, v6, v2, v4
    vpackbf v5, v5, v6
    vstm.x  [OFFSET + Y], v5
