"""NDPXNet: data-parallel training on K GPUs that share NDP-enabled memory expanders.

Baseline: every GPU holds all weights, gradients and optimizer state; gradients are
summed with a ring all-reduce over NVLink, overlapped with the backward pass bucket by
bucket (the last bucket is always exposed), and every GPU runs the optimizer itself.

NDPXNet: gradients are written to the expander as the backward pass produces them; the
expander's NDP units sum the K contributions on the fly and, once a gradient is complete,
run the optimizer next to the optimizer state, which lives in the expander. The GPUs read
the updated weights back; the next forward pass consumes them layer by layer, so only
the part of that read longer than the forward pass is exposed. Gradients and optimizer
state leave GPU memory.

Per-GPU batch: ``graph.batch``. Times come from the per-GPU iteration (``host.offload``
plan without the optimizer step) plus the communication model here. The expander's compute
per reduced sector (:func:`expander_cost`) comes from its RTL's measurement
(``build/calibration/ndp_expander.json``, written by ``matndp bench expander``) when that
file exists; otherwise it is assumed from the kernel costs, and the report says which.
"""

from dataclasses import dataclass

from .graph import IterationGraph


__all__ = ["NDPXNetConfig", "NDPXNetResult", "without_optimizer", "simulate_ndpxnet",
           "ExpanderCost", "expander_cost", "MAX_GPUS"]

# Data-parallel GPUs the model takes (beyond, a flat ring stops being a sensible model).
MAX_GPUS = 1024


@dataclass(frozen=True)
class NDPXNetConfig:
    """gpus:                 K data-parallel GPUs.
    link_gbs:               GPU-expander link per direction (CXL 2.0 / PCIe 5 x16: 64 GB/s).
    expander_memory_gbs:    DRAM bandwidth of one expander (8 DDR5-4800 channels, 307 GB/s).
    expander_channels:      memory channels of one expander, each with its NDP slices.
    expanders:              expanders sharing the parameters evenly.
    link_efficiency:        achieved fraction of link bandwidth (both kinds of link).
    bucket_bytes:           all-reduce bucket (PyTorch DDP default 25 MiB).
    """

    gpus: int
    link_gbs: float = 64.0
    expander_memory_gbs: float = 307.2
    expander_channels: int = 8
    expanders: int = 1
    link_efficiency: float = 0.8
    bucket_bytes: int = 25 * 2**20

    def __post_init__(self):
        if not isinstance(self.gpus, int) or isinstance(self.gpus, bool) \
                or not 1 <= self.gpus <= MAX_GPUS:
            raise ValueError(f"--gpus must be an integer in 1..{MAX_GPUS}, not {self.gpus!r}")
        if self.expanders < 1 or self.link_gbs <= 0 or self.expander_memory_gbs <= 0:
            raise ValueError("NDPXNet: expanders, link and memory bandwidth must be positive")
        if not 0 < self.link_efficiency <= 1:
            raise ValueError("NDPXNet: link_efficiency must be in (0, 1]")


@dataclass(frozen=True)
class NDPXNetResult:
    gpus: int
    baseline_s: float
    ndpxnet_s: float
    allreduce_s: float
    allreduce_exposed_s: float
    optimizer_gpu_s: float
    gradient_write_s: float
    expander_s: float
    weight_read_s: float
    ndpxnet_exposed_s: float
    nvlink_bytes: int
    expander_link_bytes: int
    memory_saved_per_gpu_bytes: int

    @property
    def speedup(self):
        return self.baseline_s / self.ndpxnet_s

    def as_dict(self):
        return {**self.__dict__, "speedup": self.speedup}


def without_optimizer(graph):
    """The same iteration without its optimizer step (which NDPXNet moves away)."""
    ops = [op for op in graph.ops if op.phase != "optimizer"]
    return IterationGraph(graph.name, graph.tensors.values(), ops, batch=graph.batch,
                          dtype=graph.dtype, meta=graph.meta)


@dataclass(frozen=True)
class ExpanderCost:
    """What one expander slice spends per reduced sector (one sector of one GPU's gradient,
    the sum of K written sectors, with its optimizer step): ``cycles_per_reduced_sector``,
    where the figure comes from (``source``: the RTL calibration file, or ``assumption``)
    and how it was obtained at this K (``basis``)."""

    kernel: str
    gpus: int
    cycles_per_reduced_sector: float
    source: str
    basis: str

    def as_dict(self):
        return dict(self.__dict__)


def expander_cost(kernel, gpus, calibration, expander_calibration=None):
    """The expander slice's cost of reducing ``gpus`` gradients with optimizer ``kernel``:
    from ``expander_calibration`` (an :class:`~.calibration.ExpanderCalibration`, measured
    on the expander slice's RTL) when it measured ``kernel``, else the assumption: the
    optimizer kernel's cost on one slice plus an ``add`` per further contribution
    (``calibration``'s kernel costs)."""
    measured = None if expander_calibration is None \
        else expander_calibration.cycles_per_reduced_sector(kernel, gpus)
    if measured is not None:
        cycles, basis = measured
        return ExpanderCost(kernel, gpus, cycles, expander_calibration.source, basis)
    cycles = calibration.cost(kernel).cycles_per_packet \
        + (gpus - 1) * calibration.cost("add").cycles_per_packet
    return ExpanderCost(kernel, gpus, cycles, "assumption",
                        f"{kernel} plus {gpus - 1} x add, kernel costs from {calibration.source}")


def _bytes(graph, kind):
    return sum(t.bytes for t in graph.tensors.values() if t.kind == kind)


def simulate_ndpxnet(graph, gpu, config, *, forward_s, backward_s, optimizer_gpu_s,
                     expander_optimizer_s, last_gradient_bytes):
    """Iteration time of both schemes. ``forward_s``/``backward_s``: per-GPU compute time
    of the two passes (baseline or with matNDP, as the caller chooses); ``optimizer_gpu_s``:
    the baseline optimizer step; ``expander_optimizer_s``: NDP compute time of the optimizer
    kernels on all expander slices."""
    k = config.gpus
    grads = _bytes(graph, "weight_gradient")
    weights = _bytes(graph, "weight")
    states = _bytes(graph, "optimizer_state")
    link_bps = config.link_gbs * 1e9 * config.link_efficiency
    nvlink_bps = gpu.nvlink_gbs / 2 * 1e9 * config.link_efficiency   # one direction
    ring = 2 * (k - 1) / k
    allreduce_s = ring * grads / nvlink_bps
    tail_s = ring * min(grads, config.bucket_bytes) / nvlink_bps
    exposed = 0.0 if k == 1 else max(allreduce_s - backward_s, tail_s)
    baseline_s = forward_s + backward_s + exposed + optimizer_gpu_s

    write_s = grads / link_bps
    read_s = weights / link_bps
    # expander DRAM, as the expander slice's reduction does it (docs/ndpxnet-rtl.md): each
    # GPU writes its copy of a gradient (K writes), the last arrival reads the other K - 1
    # and hands the sum straight to the optimizer, which reads and writes its state and
    # writes the 16-bit/32-bit weights the GPUs read back (K reads).
    expander_bytes = grads * (k + (k - 1)) + 2 * states + weights * (1 + k)
    expander_s = expander_bytes / (config.expander_memory_gbs * 1e9 * config.expanders)
    streaming_s = max(write_s, expander_s, expander_optimizer_s / config.expanders)
    tail_s = last_gradient_bytes / link_bps
    exposed_ndp = max(streaming_s - backward_s, tail_s) + max(0.0, read_s - forward_s)
    ndpxnet_s = forward_s + backward_s + exposed_ndp
    return NDPXNetResult(
        gpus=k, baseline_s=baseline_s, ndpxnet_s=ndpxnet_s, allreduce_s=allreduce_s,
        allreduce_exposed_s=exposed, optimizer_gpu_s=optimizer_gpu_s, gradient_write_s=write_s,
        expander_s=expander_s, weight_read_s=read_s, ndpxnet_exposed_s=exposed_ndp,
        nvlink_bytes=int(round(k * ring * grads)), expander_link_bytes=k * (grads + weights),
        memory_saved_per_gpu_bytes=grads + states)
