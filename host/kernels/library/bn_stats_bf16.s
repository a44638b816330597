.kernel bn_stats_bf16
; bn_stats on BF16 activations (C a multiple of 16): a sector's two halves are channel
; groups 2g and 2g+1, accumulated in FP32 exactly as bn_stats does the widened tensor's
; sectors 2s and 2s+1.
.include "batchnorm.inc"
    bn_stats_arguments

.init
    clear_partials SQUARES_SP

.main
    remc    x1, OFFSET, GROUPS
    shl     x1, x1, 1                  ; two FP32 groups per BF16 sector
    add     x1, x1, SQUARES_SP
    vcvtlo  v1, DATA
    vcvthi  v2, DATA
    samofma [x1], v1, v1
    samofma [x1 + 32], v2, v2
    samoadd [x1 + PARTIALS_BYTES], v1
    samoadd.r.x [x1 + PARTIALS_BYTES + 32], v2

.final
    bn_stats_finalizer
