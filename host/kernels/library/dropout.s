.kernel dropout
; y = x · (mask ? scale : 0), the mask one byte (0 or 1) per element: PyTorch's
; input * noise with noise = mask / (1 − p). The backward is the same kernel on dy.
.arg Y 0
.arg KEEP 1              ; the mask (MASK names the byte-enable special)
.arg SCALE 2
.include "mask.inc"

.main
    mask_bits v1, KEEP
    vsel    v2, SCALE, 0.0, v1
    vmul    v2, DATA, v2
    vstm.x  [OFFSET + Y], v2
