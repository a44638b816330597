.kernel layernorm_stats
; Layer-norm statistics on the producer's writes of x: per row, Σx and Σx² lane by lane
; in K partials (partial = sector mod K), so that consecutive sectors of a row update
; different addresses. The finalizer adds a row's partials in ascending order, then its
; lanes (vredsum's pairwise tree), and writes mean and rstd = 1/√(max(E[x²] − mean², 0) +
; eps) per row, and for layernorm_apply the row coefficients (rstd, −mean·rstd) as two
; broadcast sectors.
.include "layernorm.inc"
    layernorm_stats_arguments

.init
    clear_partials SQUARES_SP

.main
    row_partial
    add     x1, x1, SQUARES_SP
    samofma [x1], DATA, DATA
    samoadd.r.x [x1 + PARTIALS_BYTES], DATA

.final
    layernorm_stats_finalizer
