.kernel dropout_bf16
; dropout on BF16 tensors: y = x · (mask ? scale : 0), the mask one byte per element,
; rounded once to BF16.
.arg Y 0
.arg KEEP 1              ; the mask (MASK names the byte-enable special)
.arg SCALE 2
.include "mask.inc"

.main
    mask_bits_bf16 v1, v2, KEEP
    vsel    v1, SCALE, 0.0, v1
    vsel    v2, SCALE, 0.0, v2
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vmul    v1, v3, v1
    vmul    v2, v4, v2
    vpackbf v1, v1, v2
    vstm.x  [OFFSET + Y], v1
