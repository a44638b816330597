.kernel softmax_bwd_dot
; Softmax backward, phase 1, on the writes of dy: per row Σ dy·y lane by lane in K
; partials (one rounding per step). The finalizer adds a row's partials in ascending
; order, then its lanes, and writes the sum as a broadcast sector per row.
.include "softmax.inc"
    softmax_bwd_dot_arguments

.init
    softmax_bwd_dot_initializer

.main
    vld     v1, [OFFSET + Y]          ; first: its memory latency overlaps the address
    row_partial
    add     x1, x1, DOTS_SP
    samofma.r.x [x1], DATA, v1

.final
    row_reduction_finalizer DOTS_SP, vadd, vredsum, DOT_ROWS
