"""GPU timing: per-op roofline with efficiency factors and launch overhead, and the
single-stream timeline of a training iteration.

An op takes ``launch + max(flops / (peak * compute_efficiency[kind]),
bytes / (bandwidth * memory_efficiency[kind]))``, where ``bytes`` reads every input and
writes every output once (no reuse across kernels through L2). Peak FLOPs are the tensor
core peak for 16-bit GEMM and convolution, the FP32 peak otherwise (TF32 is not modelled).
Presets take their peaks from the vendors' documents (docs/host-model.md); the
efficiency factors and the launch overhead are assumptions of this model, stated there.
"""

from dataclasses import dataclass, field
from types import MappingProxyType

from .graph import FLOAT_DTYPES, HALF_DTYPES
from .registry import Registry


__all__ = ["GPUPreset", "PRESETS", "get_preset", "op_time_s", "baseline_timeline",
           "TimelineEntry", "Efficiency"]


def _frozen(mapping):
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Efficiency:
    """Fractions of peak an op kind reaches. Memory efficiencies are capped by
    ``achievable_bandwidth``: DRAM refresh, turnarounds and row misses cost every client,
    GPU and NDP alike."""

    compute: MappingProxyType = field(default_factory=lambda: _frozen({
        "gemm": 0.70, "conv": 0.60}))
    compute_default: float = 0.50
    memory: MappingProxyType = field(default_factory=lambda: _frozen({
        "elementwise": 0.85, "optimizer": 0.85, "normalization": 0.60, "softmax": 0.65,
        "pooling": 0.60, "loss": 0.60, "reduction": 0.60, "embedding": 0.40,
        "gather": 0.40, "gemm": 0.85, "conv": 0.85}))
    memory_default: float = 0.60
    achievable_bandwidth: float = 0.90

    def compute_for(self, kind):
        return self.compute.get(kind, self.compute_default)

    def memory_for(self, kind):
        return min(self.memory.get(kind, self.memory_default), self.achievable_bandwidth)


TENSOR_CORE_KINDS = ("gemm", "conv")


@dataclass(frozen=True)
class GPUPreset:
    """A GPU as the timing model sees it: peaks (FP32, 16-bit tensor cores, DRAM bandwidth
    in GB/s of 1e9 B), capacity, memory controllers (one NDP unit beside each), L2, NVLink,
    TDP, kernel launch overhead and the efficiency factors of the roofline."""

    name: str
    fp32_tflops: float
    tensor_tflops: float          # dense FP16/BF16 tensor-core peak
    memory_gbs: float             # DRAM bandwidth, GB/s (1e9 B/s)
    capacity_gb: float
    memory_controllers: int
    l2_mb: float
    nvlink_gbs: float             # total over both directions
    tdp_w: float
    launch_overhead_s: float = 4e-6
    efficiency: Efficiency = field(default_factory=Efficiency)
    # "gpu", or "npu" for an accelerator without GPU memory controllers to put matNDP
    # beside (it times ops and tiers like a GPU; matNDP's own comparisons leave it out).
    kind: str = "gpu"

    def __post_init__(self):
        for name in ("fp32_tflops", "tensor_tflops", "memory_gbs", "capacity_gb", "tdp_w",
                     "nvlink_gbs"):
            if not getattr(self, name) > 0:
                raise ValueError(f"GPU preset {self.name!r}: {name} must be positive")
        if self.memory_controllers < 1 or self.launch_overhead_s < 0:
            raise ValueError(f"GPU preset {self.name!r}: bad controllers or launch overhead")
        if self.kind not in ("gpu", "npu"):
            raise ValueError(f"GPU preset {self.name!r}: kind must be gpu or npu, got {self.kind!r}")

    @property
    def bandwidth_bps(self):
        return self.memory_gbs * 1e9

    @property
    def usable_bandwidth_bps(self):
        """What all clients together can draw from DRAM."""
        return self.bandwidth_bps * self.efficiency.achievable_bandwidth

    def peak_flops(self, kind, dtype):
        if kind in TENSOR_CORE_KINDS and dtype in HALF_DTYPES:
            return self.tensor_tflops * 1e12
        return self.fp32_tflops * 1e12


# V100 SXM2 32 GB, A100 SXM 40 GB, H100 SXM 80 GB (NVIDIA's whitepapers and datasheets,
# docs/host-model.md). TDPs: 300 W, 400 W, 700 W from the same datasheets.
# tpu-v4: a TPU-v4-class NPU (Jouppi et al., ISCA 2023; Google Cloud's TPU v4 page):
# 275 TFLOPS BF16 on its matrix units, 32 GiB of HBM2 in four stacks at 1200 GB/s, 128 MiB
# of common memory (CMEM, in the L2 column), 192 W at most, PCIe Gen3 x16 to its host. Its
# FP32 vector peak is not published: 4.3 TFLOPS is derived (2 cores x 128 x 8 lanes x 2
# FLOPs x 1.05 GHz, the vector unit of TPU v2/v3, Norrie et al., IEEE Micro 2021) and an
# assumption. Inter-chip links: six at 50 GB/s each way, 600 GB/s in all (secondary).
PRESETS = Registry("GPU preset", (
    GPUPreset("v100", 15.7, 125.0, 900.0, 32.0, 8, 6.0, 300.0, 300.0),
    GPUPreset("a100", 19.5, 312.0, 1555.0, 40.0, 10, 40.0, 600.0, 400.0),
    GPUPreset("h100", 66.9, 989.4, 3350.0, 80.0, 10, 50.0, 900.0, 700.0),
    GPUPreset("tpu-v4", 4.3, 275.0, 1200.0, 32.0, 4, 128.0, 600.0, 192.0, kind="npu"),
))


def get_preset(name):
    """The preset registered as ``name``, in any letter case."""
    key = str(name).lower()
    if key not in PRESETS:
        raise PRESETS.unknown(name)
    return PRESETS[key]


def _op_dtype(graph, op):
    """The arithmetic type of an op: 16-bit if its first floating-point input is."""
    for tensor_id in op.inputs:
        dtype = graph.tensors[tensor_id].dtype
        if dtype in FLOAT_DTYPES:
            return dtype
    return "fp32"


def compute_time_s(graph, op, gpu):
    peak = gpu.peak_flops(op.kind, _op_dtype(graph, op))
    return op.flops / (peak * gpu.efficiency.compute_for(op.kind))


def memory_time_s(graph, op, gpu, nbytes=None):
    nbytes = graph.op_bytes(op) if nbytes is None else nbytes
    return nbytes / (gpu.bandwidth_bps * gpu.efficiency.memory_for(op.kind))


def op_time_s(graph, op, gpu):
    """Run time of ``op`` alone on ``gpu``, launch overhead included; a measured duration
    carried by the op replaces the estimate."""
    if op.duration_s is not None:
        return op.duration_s
    return gpu.launch_overhead_s + max(compute_time_s(graph, op, gpu),
                                       memory_time_s(graph, op, gpu))


def is_memory_bound(graph, op, gpu):
    return memory_time_s(graph, op, gpu) >= compute_time_s(graph, op, gpu)


@dataclass(frozen=True)
class TimelineEntry:
    """One op on the GPU timeline: when it runs and the DRAM bytes it moves."""

    op: str
    kind: str
    phase: str
    start_s: float
    end_s: float
    bytes: int

    @property
    def duration_s(self):
        return self.end_s - self.start_s


def baseline_timeline(graph, gpu, op_time=None):
    """The ops one after another on one stream, in graph order; ``op_time(op)`` gives an
    op's time (default: :func:`op_time_s` on ``gpu``)."""
    entries, now = [], 0.0
    for op in graph.ops:
        duration = op_time_s(graph, op, gpu) if op_time is None else op_time(op)
        entries.append(TimelineEntry(op.name, op.kind, op.phase, now, now + duration,
                                     graph.op_bytes(op)))
        now += duration
    return entries
