.kernel softmax_max_bf16
; softmax_max on BF16 x (L a multiple of 16): the maximum of a sector's halves, then as
; softmax_max.
.include "softmax.inc"
    softmax_max_arguments

.init
    softmax_max_initializer

.main
    vcvtlo  v1, DATA
    vcvthi  v2, DATA
    vmax    v1, v1, v2
    row_partial
    samomax.r.x [x1 + MAX_SP], v1

.final
    row_reduction_finalizer MAX_SP, vmax, vredmax, MAX_ROWS
