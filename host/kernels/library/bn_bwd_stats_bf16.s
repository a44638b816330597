.kernel bn_bwd_stats_bf16
; bn_bwd_stats on BF16 dy and x: the halves accumulated in FP32 as bn_bwd_stats does the
; widened tensors' sectors 2s and 2s+1.
.include "batchnorm.inc"
    bn_bwd_stats_arguments

.init
    clear_partials DOTS_SP

.main
    remc    x1, OFFSET, GROUPS
    shl     x1, x1, 1
    add     x1, x1, DOTS_SP
    vld     v1, [OFFSET + X]
    vcvtlo  v2, v1
    vcvthi  v3, v1
    vcvtlo  v4, DATA
    vcvthi  v5, DATA
    samofma [x1], v4, v2
    samofma [x1 + 32], v5, v3
    samoadd [x1 + PARTIALS_BYTES], v4
    samoadd.r.x [x1 + PARTIALS_BYTES + 32], v5

.final
    bn_bwd_stats_finalizer
