.kernel tanh_fwd_bf16
; tanh_fwd on BF16 tensors: each half widened, tanh as tanh_fwd, the two results rounded
; once to BF16.
.arg Y 0
.include "tanh.inc"

.main
    vcvtlo  v8, DATA
    vcvthi  v9, DATA
    tanh    v10, v8                    ; elements 0 … 7
    tanh    v11, v9                    ; elements 8 … 15
    vpackbf v10, v10, v11
    vstm.x  [OFFSET + Y], v10
