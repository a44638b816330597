/* Reset entry of the SoC's firmware: stack at the top of SRAM, .data copied from ROM,
   .bss cleared, then main; the firmware ends the simulation itself. */
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
4:  call    main
5:  j       5b
