.kernel expander_sum
; The K GPUs' gradients of one tensor, reduced in the memory expander as they arrive
; (docs/ndpxnet-rtl.md). GPU k writes grad[k]; the K copies lie one after the other,
; one entry watching them all. Each write counts its sector's arrival in a lane of a
; scratchpad counter (−K at the start, set by the runtime); the K-th arrival, and only it,
; sees 0: it loads the other K − 1 copies of its sector and sums the K in GPU-index order,
; ((g0 + g1) + g2) + …, its own from the write's data, whatever order they arrived in.
; The optimizer kernels (expander_adam, …) are this one with the optimizer's .main in
; place of the store of the sum (host/kernels/expander.py).
.arg SUM 0               ; the reduced gradient
.arg COPY 1              ; divisor descriptor of a copy's bytes: OFFSET ÷ it = k, OFFSET mod it = the offset in a copy
.arg COUNTERS 2          ; scratchpad address of the arrival counters, a lane per sector of a copy
.arg PORTS 3             ; K

.main
    divc    x1, OFFSET, COPY                 ; the writing GPU, k
    remc    x2, OFFSET, COPY                 ; the sector's offset within a copy
    shr     x3, x2, 8
    shl     x3, x3, 5                        ; its counter sector (8 sectors a counter sector)
    shr     x4, x2, 5
    and     x4, x4, 7                        ; its lane there
    shl     x5, 1, x4
    vsplat  v10, x5
    vishr   v10, v10, LANE                   ; bit 0 set in lane x4 alone
    vsplat  v14, x0
    vsel    v10, 1.0, v14, v10               ; 1.0 in lane x4, else 0.0
    samoadd [x3 + COUNTERS], v10             ; this arrival, counted (posted)
    sld     v11, [x3 + COUNTERS]             ; waits for it; later writes' atomics wait for the ticket
    samoadd.r [x3 + COUNTERS], v14           ; the ticket on to the next write
    vget    x6, v11, x4                      ; −K + the arrivals up to this one
    bne     x6, x0, counted                  ; not the K-th arrival
    sub     x7, ADDR, OFFSET
    add     x7, x7, x2                       ; the sector in grad[0]
    shr     x8, COPY, 40                     ; a copy's bytes, the descriptor's divisor
    beq     x1, x0, own_first
    vld     v12, [x7]
    jump    summed_first
own_first:
    vior    v12, DATA, DATA
summed_first:
    add     x9, x0, 1
next_copy:
    add     x7, x7, x8
    beq     x9, x1, own
    vld     v13, [x7]
    jump    add_copy
own:
    vior    v13, DATA, DATA
add_copy:
    vadd    v12, v12, v13                    ; ((g0 + g1) + g2) + …
    add     x9, x9, 1
    bne     x9, PORTS, next_copy
    vstm.x  [x2 + SUM], v12
counted:
    exit
