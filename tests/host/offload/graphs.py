"""A GPU with round numbers and small hand-made graphs for the offload tests, so that
times can be worked out by hand."""

from types import MappingProxyType

from matndp.host.calibration import Calibration, KernelCost, NDPHardware
from matndp.host.gpu import Efficiency, GPUPreset
from matndp.host.graph import IterationGraph, Op, Tensor


# 10 FP32 TFLOPS, 100 GB/s (90 GB/s usable by GPU and NDP together), 4 memory controllers
GPU = GPUPreset("round", fp32_tflops=10.0, tensor_tflops=80.0, memory_gbs=100.0,
                capacity_gb=16, memory_controllers=4, l2_mb=4, nvlink_gbs=100, tdp_w=200,
                launch_overhead_s=5e-6,
                efficiency=Efficiency(compute={"gemm": 0.5}, compute_default=0.5,
                                      memory={"gemm": 0.8, "elementwise": 0.8,
                                              "normalization": 0.5},
                                      memory_default=0.5, achievable_bandwidth=0.9))
N = 1_000_000      # elements of each activation (4 MB in FP32)

# 4 slices per controller at 1 GHz: 16 slices, 16 G slice-cycles per second
HARDWARE = NDPHardware(slices_per_controller=4, clock_hz=1e9)


def chain(middle_kind="elementwise", kernel="relu_fwd"):
    """mm1 (compute-bound GEMM) -> middle (memory-bound) -> mm2 (GEMM)."""
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("w", (N,), "fp32", "weight"),
               Tensor("y", (N,), "fp32", "activation"), Tensor("z", (N,), "fp32", "activation"),
               Tensor("out", (N,), "fp32", "activation")]
    ops = [Op("mm1", "gemm", "forward", 4 * 10 ** 9, ("x", "w"), ("y",)),
           Op("middle", middle_kind, "forward", N, ("y",), ("z",), ("mm1",),
              {"ndp_kernel": kernel}),
           Op("mm2", "gemm", "forward", 4 * 10 ** 9, ("z", "w"), ("out",), ("middle",))]
    return IterationGraph("chain", tensors, ops, batch=1, dtype="fp32")


def calibration_of(cycles, hardware=HARDWARE):
    """Kernel costs ``{name: KernelCost arguments}`` on ``hardware``."""
    return Calibration(MappingProxyType({k: KernelCost(*c) for k, c in cycles.items()}),
                       hardware)
