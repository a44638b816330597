.kernel layernorm_bwd_stats
; Layer-norm backward, row reductions, on the writes of dy: with g = dy·weight, per row
; ds = Σ g·x and db = Σ g in K partials (as layernorm_stats). The finalizer adds the
; partials in ascending order, then the lanes, and writes per row the coefficients of
; dx = a·g + (b·x + c) and x̂ = a·x + m (four broadcast sectors): a = rstd,
; b = (((db·mean − ds)·a)·a)·a·(1/L), c = −(db·a·(1/L)) − b·mean, m = −mean·rstd.
.include "layernorm.inc"
    layernorm_bwd_stats_arguments

.init
    layernorm_bwd_stats_initializer

.main
    vld     v2, [OFFSET + X]           ; first: its memory latency overlaps the rest
    remc    x2, OFFSET, ROWS
    divc    x1, OFFSET, ROWS
    and     x3, OFFSET, PARTIAL_MASK
    sld     v1, [x2 + WEIGHT_SP]
    shl     x1, x1, PARTIAL_SHIFT
    vmul    v1, DATA, v1               ; g = dy·weight
    add     x1, x1, x3
    add     x1, x1, DOTS_SP
    samofma [x1], v1, v2
    samoadd.r.x [x1 + PARTIALS_BYTES], v1

.final
    layernorm_bwd_stats_finalizer
