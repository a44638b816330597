.kernel where
; y = condition ? x : fill, the condition one byte (0 or 1) per element (torch.where); the backward
; is the same kernel on dy with fill 0.
.arg Y 0
.arg CONDITION 1
.arg FILL 2

.main
    shr     x1, OFFSET, 2             ; the sector's eight condition bytes start at OFFSET / 4
    lw      x2, [x1 + CONDITION]
    lw      x3, [x1 + CONDITION + 4]
    vsplat  v1, x2
    vsplat  v2, x3
    vishr   v3, LANE, 2               ; lanes 4 … 7 take the second word
    vsel    v1, v2, v1, v3
    vishl   v2, LANE, 3               ; lane i's byte sits at bit 8·(i mod 4)
    vishr   v1, v1, v2
    vsel    v1, DATA, FILL, v1
    vstm.x  [OFFSET + Y], v1
