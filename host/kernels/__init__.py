"""NDP kernels on the host: assembler, disassembler, divisor descriptors and the
instruction-set simulator of the engine's ISA (:mod:`matndp.hw.engine.isa`)."""
