"""The NDP engine: µthreads started by trigger events run kernels of the one ISA
(:mod:`matndp.hw.engine.isa`) on SIMD FP32 lanes, with a load/store unit and a scratchpad."""
