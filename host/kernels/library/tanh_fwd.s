.kernel tanh_fwd
; y = tanh x on the producer's writes of x (the sequence: tanh.inc).
.arg Y 0
.include "tanh.inc"

.main
    tanh    v5, DATA
    vstm.x  [OFFSET + Y], v5
