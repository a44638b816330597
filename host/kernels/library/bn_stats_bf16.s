.kernel bn_stats_bf16
; bn_stats on BF16 activations (channels innermost, C a multiple of 16): a sector's two
; halves are channel groups 2g and 2g+1, accumulated in FP32 exactly as bn_stats does
; the widened tensor's sectors 2s and 2s+1.
.arg MEAN 0
.arg INVSTD 1
.arg SCALE 2             ; weight·invstd, for bn_apply
.arg SHIFT 3             ; bias − mean·scale, for bn_apply
.arg RUNNING_MEAN 4
.arg RUNNING_VAR 5
.arg WEIGHT 6
.arg BIAS 7
.arg GROUPS 8            ; divisor descriptor of 2C·K: 2·(OFFSET mod 2C·K) = 32 × the copy's group
.arg SQUARES_SP 9        ; the Σx² copies in the scratchpad, 4C·K bytes; the Σx copies follow
.arg PARTIALS_BYTES 10       ; 4C·K
.arg ROW_BYTES 11        ; 4C
.arg COUNT 12            ; rows, as FP32
.arg EPS 13
.arg MOMENTUM 14

.init
    vsplat  v1, x0
    add     x1, x0, SQUARES_SP
    add     x2, x1, PARTIALS_BYTES
    add     x2, x2, PARTIALS_BYTES
clear:
    sst     [x1], v1
    add     x1, x1, 32
    bltu    x1, x2, clear
    exit

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
    add     x6, x0, SQUARES_SP
    add     x6, x6, PARTIALS_BYTES         ; end of the Σx² copies
    add     x1, x0, 0                  ; 32g: the channel group
group:
    add     x2, x1, SQUARES_SP         ; copy 0
    sld     v1, [x2]
    sld     v2, [x2 + PARTIALS_BYTES]
    jump    next
copies:
    sld     v3, [x2]
    vadd    v1, v1, v3
    sld     v3, [x2 + PARTIALS_BYTES]
    vadd    v2, v2, v3
next:
    add     x2, x2, ROW_BYTES
    bltu    x2, x6, copies
    vdiv    v2, v2, COUNT              ; mean
    vdiv    v1, v1, COUNT              ; E[x²]
    vfnma   v1, v2, v2, v1             ; var = E[x²] − mean² (biased)
    vmax    v1, v1, 0.0
    vadd    v3, v1, EPS
    vrsqrt  v3, v3                     ; invstd
    vst     [x1 + MEAN], v2
    vst     [x1 + INVSTD], v3
    vld     v4, [x1 + WEIGHT]
    vmul    v4, v4, v3                 ; scale
    vst     [x1 + SCALE], v4
    vld     v5, [x1 + BIAS]
    vfnma   v5, v2, v4, v5             ; shift
    vst     [x1 + SHIFT], v5
    vsub    v6, 1.0, MOMENTUM
    vld     v7, [x1 + RUNNING_MEAN]
    vmul    v7, v7, v6
    vfma    v7, v2, MOMENTUM, v7       ; momentum·mean + (1 − momentum)·running_mean
    vst     [x1 + RUNNING_MEAN], v7
    vsub    v8, COUNT, 1.0
    vdiv    v8, COUNT, v8              ; n / (n − 1)
    vmul    v8, v1, v8                 ; unbiased var
    vld     v7, [x1 + RUNNING_VAR]
    vmul    v7, v7, v6
    vfma    v7, v8, MOMENTUM, v7
    vst     [x1 + RUNNING_VAR], v7
    add     x1, x1, 32
    bltu    x1, ROW_BYTES, group
    exit
