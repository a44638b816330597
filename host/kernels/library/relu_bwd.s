.kernel relu_bwd
; dx = 0 where the forward output y <= 0, else dy (PyTorch's threshold_backward at 0);
; triggered by the writes of dy.
.arg Y 0
.arg DX 1

.main
    vld     v1, [OFFSET + Y]
    vcmple  v2, v1, 0.0
    vsel    v3, 0.0, DATA, v2
    vstm.x  [OFFSET + DX], v3
