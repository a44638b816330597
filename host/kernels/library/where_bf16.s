.kernel where_bf16
; where on BF16 tensors: y = condition ? x : fill (rounded to BF16), the condition one
; byte per element: a sector's 16 condition bytes start at OFFSET / 2.
.arg Y 0
.arg CONDITION 1
.arg FILL 2              ; the fill value as FP32 (rounded to BF16 with the result)

.main
    shr     x1, OFFSET, 1
    lw      x2, [x1 + CONDITION]
    lw      x3, [x1 + CONDITION + 4]
    lw      x4, [x1 + CONDITION + 8]
    lw      x5, [x1 + CONDITION + 12]
    vishr   v6, LANE, 2
    vishl   v7, LANE, 3
    vsplat  v1, x2
    vsplat  v2, x3
    vsel    v1, v2, v1, v6
    vishr   v1, v1, v7
    vsplat  v2, x4
    vsplat  v3, x5
    vsel    v2, v3, v2, v6
    vishr   v2, v2, v7
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vsel    v1, v3, FILL, v1
    vsel    v2, v4, FILL, v2
    vpackbf v1, v1, v2
    vstm.x  [OFFSET + Y], v1
