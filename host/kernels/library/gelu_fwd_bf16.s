.kernel gelu_fwd_bf16
; gelu_fwd on BF16 tensors: each half of the sector widened, GELU as gelu_fwd, the two
; results rounded once to BF16.
.arg Y 0
.include "gelu.inc"

.main
    vcvtlo  v8, DATA
    vcvthi  v9, DATA
    gelu    v10, v8                    ; elements 0 … 7
    gelu    v11, v9                    ; elements 8 … 15
    vpackbf v10, v10, v11
    vstm.x  [OFFSET + Y], v10
