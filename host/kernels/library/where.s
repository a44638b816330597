.kernel where
; y = condition ? x : fill, the condition one byte (0 or 1) per element (torch.where); the
; backward is the same kernel on dy with fill 0.
.arg Y 0
.arg CONDITION 1
.arg FILL 2
.include "mask.inc"

.main
    mask_bits v1, CONDITION
    vsel    v1, DATA, FILL, v1
    vstm.x  [OFFSET + Y], v1
