"""Runs of real workloads through the RTL, each with its report: a layer's output stream
through the trigger (``make sim``'s first part), the co-simulation of a training block or
iteration (:mod:`.cosim`), a layer through the engine, library kernels (per cycle and in
batch mode), the expander's reduction and NDPXNet, and FP32 vectors through the FP units."""
