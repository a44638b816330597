/* Reset entry of the SoC's firmware: stack at the top of SRAM, .data copied from ROM,
   .bss cleared, traps to trap_entry with external interrupts allowed (main unmasks them),
   then main; the firmware ends a simulation itself. */
    .section .text.start
    .global _start
_start:
    la      sp, _fstack
    la      t0, _fdata
    la      t1, _edata
    la      t2, _fdata_rom
1:  bgeu    t0, t1, 2f
    lw      t3, 0(t2)
    sw      t3, 0(t0)
    addi    t0, t0, 4
    addi    t2, t2, 4
    j       1b
2:  la      t0, _fbss
    la      t1, _ebss
3:  bgeu    t0, t1, 4f
    sw      zero, 0(t0)
    addi    t0, t0, 4
    j       3b
4:  la      t0, trap_entry
    csrw    mtvec, t0
    li      t0, 0x800               /* mie.MEIE: the interrupt controller's line */
    csrw    mie, t0
    call    main
5:  j       5b

/* Every trap is an interrupt here (the firmware raises no exceptions): the registers a C
   function may change are saved around isr(). */
    .align  2
trap_entry:
    addi    sp, sp, -64
    sw      ra, 0(sp)
    sw      t0, 4(sp)
    sw      t1, 8(sp)
    sw      t2, 12(sp)
    sw      a0, 16(sp)
    sw      a1, 20(sp)
    sw      a2, 24(sp)
    sw      a3, 28(sp)
    sw      a4, 32(sp)
    sw      a5, 36(sp)
    sw      a6, 40(sp)
    sw      a7, 44(sp)
    sw      t3, 48(sp)
    sw      t4, 52(sp)
    sw      t5, 56(sp)
    sw      t6, 60(sp)
    call    isr
    lw      ra, 0(sp)
    lw      t0, 4(sp)
    lw      t1, 8(sp)
    lw      t2, 12(sp)
    lw      a0, 16(sp)
    lw      a1, 20(sp)
    lw      a2, 24(sp)
    lw      a3, 28(sp)
    lw      a4, 32(sp)
    lw      a5, 36(sp)
    lw      a6, 40(sp)
    lw      a7, 44(sp)
    lw      t3, 48(sp)
    lw      t4, 52(sp)
    lw      t5, 56(sp)
    lw      t6, 60(sp)
    addi    sp, sp, 64
    mret
