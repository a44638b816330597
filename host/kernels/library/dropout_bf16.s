.kernel dropout_bf16
; dropout on BF16 tensors: y = x · (mask ? scale : 0), the mask one byte per element:
; a sector's 16 mask bytes start at OFFSET / 2.
.arg Y 0
.arg KEEP 1
.arg SCALE 2

.main
    shr     x1, OFFSET, 1
    lw      x2, [x1 + KEEP]            ; mask bytes 0 … 3
    lw      x3, [x1 + KEEP + 4]        ; 4 … 7
    lw      x4, [x1 + KEEP + 8]        ; 8 … 11
    lw      x5, [x1 + KEEP + 12]       ; 12 … 15
    vishr   v6, LANE, 2                ; lanes 4 … 7 take the second word of a half
    vishl   v7, LANE, 3                ; lane i's byte sits at bit 8·(i mod 4)
    vsplat  v1, x2
    vsplat  v2, x3
    vsel    v1, v2, v1, v6
    vishr   v1, v1, v7                 ; bit 0 of lane i: mask byte i
    vsplat  v2, x4
    vsplat  v3, x5
    vsel    v2, v3, v2, v6
    vishr   v2, v2, v7                 ; bit 0 of lane i: mask byte 8 + i
    vsel    v1, SCALE, 0.0, v1
    vsel    v2, SCALE, 0.0, v2
    vcvtlo  v3, DATA
    vcvthi  v4, DATA
    vmul    v1, v3, v1
    vmul    v2, v4, v2
    vpackbf v1, v1, v2
    vstm.x  [OFFSET + Y], v1
