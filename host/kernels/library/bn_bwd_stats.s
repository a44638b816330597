.kernel bn_bwd_stats
; Batch-norm backward, reductions, on the writes of dy (channels innermost, as bn_stats):
; Σdy and Σdy·x per channel in K partials. The finalizer adds the partials in ascending
; order, writes grad_weight = Σdy·(x − mean)·invstd and grad_bias = Σdy, and the
; coefficients of dx = a·dy + (b·x + c): a = invstd·weight, k = Σdy·(x − mean)·invstd² / n,
; b = −(a·k), c = a·(k·mean − Σdy/n).
.include "batchnorm.inc"
    bn_bwd_stats_arguments

.init
    clear_partials DOTS_SP

.main
    remc    x1, OFFSET, GROUPS
    vld     v1, [OFFSET + X]
    add     x1, x1, DOTS_SP
    samofma [x1], DATA, v1
    samoadd.r.x [x1 + PARTIALS_BYTES], DATA

.final
    bn_bwd_stats_finalizer
