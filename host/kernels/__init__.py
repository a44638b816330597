"""NDP kernels on the host: the assembler (with ``.include`` and ``.macro``), the
disassembler, divisor descriptors, the instruction-set simulator of the engine's ISA
(:mod:`matndp.hw.engine.isa`) and the kernel library (:mod:`.library`)."""
