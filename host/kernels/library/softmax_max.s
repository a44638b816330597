.kernel softmax_max
; Softmax, phase 1, on the producer's writes of x: the row maximum, lane by lane in K
; partials (partial = sector mod K). The finalizer takes the maximum of a row's partials
; and lanes (exact, so in any order) and writes it as a broadcast sector per row. NaN
; propagates.
.include "softmax.inc"
    softmax_max_arguments

.init
    softmax_max_initializer

.main
    row_partial
    samomax.r.x [x1 + MAX_SP], DATA

.final
    row_reduction_finalizer MAX_SP, vmax, vredmax, MAX_ROWS
