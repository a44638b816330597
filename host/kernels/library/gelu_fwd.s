.kernel gelu_fwd
; y = GELU(x), tanh form, on the producer's writes of x (the sequence: gelu.inc).
.arg Y 0
.include "gelu.inc"

.main
    gelu    v3, DATA
    vstm.x  [OFFSET + Y], v3
