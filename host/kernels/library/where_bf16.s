.kernel where_bf16
; where on BF16 tensors: y = condition ? x : fill (rounded to BF16), the condition one
; byte per element.
.arg Y 0
.arg CONDITION 1
.arg FILL 2              ; the fill value as FP32 (rounded to BF16 with the result)
.include "mask.inc"

.main
    mask_bits_bf16 v1, v2, CONDITION
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vsel    v1, v3, FILL, v1
    vsel    v2, v4, FILL, v2
    vpackbf v1, v1, v2
    vstm.x  [OFFSET + Y], v1
