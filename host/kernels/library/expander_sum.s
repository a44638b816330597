.kernel expander_sum
; The K GPUs' gradients of one tensor, reduced in the memory expander as they arrive
; (docs/ndpxnet-rtl.md). GPU k writes grad[k]; the K copies lie one after the other,
; one entry watching them all. Each sector of a copy has an arrival record in the
; scratchpad, lane k for GPU k (−∞ at the start, set by the runtime): a write records
; its SEQ there (samomax, releasing the ticket at once, so no write waits for another's
; load) and loads the record back. The last of the K arrivals, and only it, finds every
; lane recorded and its own SEQ the largest: it loads the other K − 1 copies of its
; sector and sums the K in GPU-index order, ((g0 + g1) + g2) + …, its own from the
; write's data, whatever order they arrived in.
; The optimizer kernels (expander_adam, …) are this one with the optimizer's .main in
; place of the store of the sum (host/kernels/expander.py).
.arg SUM 0               ; the reduced gradient
.arg COPY 1              ; divisor descriptor of a copy's bytes: OFFSET ÷ it = k, OFFSET mod it = the offset in a copy
.arg ARRIVALS 2          ; scratchpad address of the arrival records, a sector per sector of a copy
.arg PORTS 3             ; K

.main
    divc    x1, OFFSET, COPY                 ; the writing GPU, k
    remc    x2, OFFSET, COPY                 ; the sector's offset within a copy, and its record's
    shl     x5, 1, x1
    vsplat  v10, x5
    vishr   v10, v10, LANE                   ; bit 0 set in lane k alone
    vsplat  v11, SEQ
    vsel    v10, v11, 0xff800000, v10        ; SEQ in lane k, −∞ elsewhere
    samomax.r [x2 + ARRIVALS], v10           ; this arrival recorded; the ticket on at once
    sld     v11, [x2 + ARRIVALS]             ; waits for it; sees every earlier arrival's
    vabs    v11, v11                         ; a lane not yet recorded, −∞, becomes +∞
    vredmax v11, v11
    vget    x6, v11, x0                      ; the largest SEQ, once all K are recorded
    bne     x6, SEQ, counted                 ; not the last arrival
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
