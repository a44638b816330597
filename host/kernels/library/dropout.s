.kernel dropout
; y = x · (mask ? scale : 0), the mask one byte (0 or 1) per element: PyTorch's
; input * noise with noise = mask / (1 − p). The backward is the same kernel on dy.
.arg Y 0
.arg KEEP 1
.arg SCALE 2

.main
    shr     x1, OFFSET, 2             ; the sector's eight mask bytes start at OFFSET / 4
    lw      x2, [x1 + KEEP]           ; bytes 0 … 3
    lw      x3, [x1 + KEEP + 4]       ; bytes 4 … 7
    vsplat  v1, x2
    vsplat  v2, x3
    vishr   v3, LANE, 2               ; lanes 4 … 7 take the second word
    vsel    v1, v2, v1, v3
    vishl   v2, LANE, 3               ; lane i's byte sits at bit 8·(i mod 4): shifts use 5 bits
    vishr   v1, v1, v2                ; bit 0 of lane i = mask byte i
    vsel    v2, SCALE, 0.0, v1
    vmul    v2, DATA, v2
    vstm.x  [OFFSET + Y], v2
