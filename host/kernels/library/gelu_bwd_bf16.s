.kernel gelu_bwd_bf16
; gelu_bwd on BF16 tensors: each half widened, dx = dy · GELU'(x) as gelu_bwd, the two
; results rounded once to BF16. Triggered by the writes of dy.
.arg X 0
.arg DX 1
.arg TWO_BETA 12         ; f32(2β)
.include "gelu.inc"

.main
    vld     v7, [OFFSET + X]
    vcvtlo  v8, v7
    vcvthi  v9, v7
    vcvtlo  v12, DATA
    vcvthi  v13, DATA
    gelu_grad v10, v12, v8             ; elements 0 … 7
    gelu_grad v11, v13, v9             ; elements 8 … 15
    vpackbf v10, v10, v11
    vstm.x  [OFFSET + DX], v10
