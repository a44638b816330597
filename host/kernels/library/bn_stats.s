.kernel bn_stats
; Batch-norm statistics on the producer's writes of x, channels innermost: a sector holds
; channels 8g … 8g+7 of one row. Sector s adds x and x², lane by lane, into partial
; s mod (K·C/8): K partials of the C channels, so that consecutive sectors update
; different addresses and atomics on one address are K·C/8 sectors apart. The finalizer
; adds the K partials of each group in ascending order and writes mean, invstd, the
; apply coefficients and the running statistics.
.include "batchnorm.inc"
    bn_stats_arguments

.init
    clear_partials SQUARES_SP

.main
    remc    x1, OFFSET, GROUPS
    add     x1, x1, SQUARES_SP
    samofma [x1], DATA, DATA
    samoadd.r.x [x1 + PARTIALS_BYTES], DATA

.final
    bn_stats_finalizer
