.kernel gelu_bwd
; dx = dy · GELU'(x), tanh form, on the writes of dy (the sequence: gelu.inc).
.arg X 0
.arg DX 1
.arg TWO_BETA 12         ; f32(2β)
.include "gelu.inc"

.main
    vld     v5, [OFFSET + X]
    gelu_grad v1, DATA, v5
    vstm.x  [OFFSET + DX], v1
