"""``matndp gpu run`` as a function: build a model, time it on a GPU preset with and without
matNDP (and, for K > 1 GPUs, with NDPXNet), and return a JSON-able report."""

import dataclasses
import math
from collections import defaultdict
from typing import NamedTuple

from .calibration import NDPHardware, load_calibration, load_expander_calibration
from .energy import (EnergyBreakdown, EnergyConstants, baseline_energy, matndp_energy,
                     ndp_slice_static_w)
from .gpu import GPUPreset, get_preset, op_time_s
from .ndpxnet import NDPXNetConfig, expander_cost, simulate_ndpxnet, without_optimizer
from .offload import MEMORY_PLACEMENTS, PlannerConfig, plan_offload
from .offload.combine import combine_steps, combined_iteration_s
from .zoo import build_model
from .zoo.summary import footprint_bytes


__all__ = ["RunConfig", "GpuRun", "run_gpu", "breakdown"]


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """What :func:`run_gpu` runs: a zoo model at ``batch`` per GPU in ``dtype`` on ``gpus``
    GPUs of preset ``gpu``, with offload ``policy`` and the NDP calibration file
    ``calibration_path`` (default: the measured file when it exists, else defaults).
    A single GPU also takes a memory ``placement`` (:data:`MEMORY_PLACEMENTS`: ``local``,
    ``expander``) and may keep its optimizer step on the GPU (``offload_optimizer``)."""

    model: str
    gpu: str
    batch: int
    dtype: str = "fp32"
    gpus: int = 1
    seq_len: int = None
    policy: str = "auto"
    calibration_path: str = None
    expanders: int = None      # NDPXNet memory expanders; default one per GPU
    ndp_slices_per_controller: int = None   # NDP hardware override (sensitivity studies)
    placement: str = "local"   # where the tensors and the NDP sit (single GPU)
    offload_optimizer: bool = True          # the optimizer step may run on the NDP (single GPU)
    # NDPXNet: the expander slice's measured reduction cost (default: the file `make bench`
    # writes when it exists, else priced from the kernel costs)
    expander_calibration_path: str = None


class GpuRun(NamedTuple):
    """The report of a run and the offload plan behind it (per GPU for K > 1)."""

    report: dict
    plan: object


def breakdown(plan):
    """Seconds per op kind: the baseline, the GPU in matNDP (kernels stretched by riding
    NDP kernels included), and standalone NDP work (overlapped, not additive)."""
    kinds = defaultdict(lambda: {"baseline_s": 0.0, "matndp_gpu_s": 0.0, "matndp_ndp_s": 0.0,
                                 "offloaded_ops": 0})
    kind_of = {op.name: op.kind for op in plan.graph.ops}
    for entry in plan.baseline:
        kinds[entry.kind]["baseline_s"] += entry.duration_s
    for busy in plan.gpu_busy:
        kinds[kind_of[busy.op]]["matndp_gpu_s"] += busy.end_s - busy.start_s
    for busy in plan.ndp_busy:
        kinds[kind_of[busy.op]]["matndp_ndp_s"] += busy.end_s - busy.start_s
    for name in plan.offloaded:
        kinds[kind_of[name]]["offloaded_ops"] += 1
    return dict(sorted(kinds.items()))


def _check_fits(graph, gpu, gpus):
    need, have = footprint_bytes(graph), gpu.capacity_gb * 1e9
    if need > have:
        raise ValueError(
            f"{graph.name} at batch {graph.batch} ({graph.dtype}) needs at least "
            f"{need / 1e9:.1f} GB per GPU (weights, gradients, optimizer state, activations) "
            f"but a {gpu.name} has {gpu.capacity_gb:g} GB; lower --batch"
            + (" (it is per GPU)" if gpus > 1 else ""))


def _check_single_gpu_options(config):
    """The memory placement and the optimizer switch are options of a single GPU: K > 1
    GPUs run NDPXNet, whose expanders always take the optimizer step."""
    MEMORY_PLACEMENTS.lookup(config.placement)
    if config.gpus > 1 and config.placement != "local":
        raise ValueError(f"placement {config.placement!r} is for one GPU; with {config.gpus} "
                         "GPUs the run is NDPXNet, whose tensors and NDP are placed by it")
    if config.gpus > 1 and not config.offload_optimizer:
        raise ValueError(f"the optimizer step cannot be kept on the GPUs with {config.gpus} "
                         "GPUs: NDPXNet runs it in the memory expanders")


def _link_energy(energy, memory, gpu_bytes, constants):
    """``energy`` with the GPU's ``gpu_bytes`` over the off-chip link, if ``memory``
    places the tensors behind one."""
    link_bits = memory.link_bytes(gpu_bytes) * 8
    return dataclasses.replace(energy, link_j=energy.link_j
                               + link_bits * constants.cxl_pj_per_bit * 1e-12)


def _with_static(energy, gpu, constants, seconds, slices=0, slice_w=0.0):
    return dataclasses.replace(
        energy, gpu_static_j=gpu.tdp_w * constants.gpu_static_fraction_of_tdp * seconds,
        ndp_static_j=slices * slice_w * seconds)


def _scaled(energy, factor, **extra):
    parts = {f.name: getattr(energy, f.name) * factor for f in dataclasses.fields(energy)}
    for name, value in extra.items():
        parts[name] += value
    return EnergyBreakdown(**parts)


def run_gpu(config, *, with_plan=False, graph=None):
    """The JSON-able report of ``config``; with ``with_plan`` a :class:`GpuRun`. ``graph``
    (an :class:`~matndp.host.graph.IterationGraph`: a workload of your own, a trace) runs
    instead of the zoo model ``config.model``, at its own batch and dtype."""
    gpu = config.gpu if isinstance(config.gpu, GPUPreset) else get_preset(config.gpu)
    _check_single_gpu_options(config)
    if graph is None:
        graph = build_model(config.model, batch=config.batch, dtype=config.dtype,
                            seq_len=config.seq_len)
    else:
        config = dataclasses.replace(config, model=graph.name, batch=graph.batch,
                                     dtype=graph.dtype)
    if config.placement == "local":     # an expander's capacity is not modelled
        _check_fits(graph, gpu, config.gpus)
    hardware = None
    if config.ndp_slices_per_controller is not None:
        hardware = NDPHardware(slices_per_controller=config.ndp_slices_per_controller)
    calibration = load_calibration(config.calibration_path, hardware)
    planner = PlannerConfig(config.policy, config.offload_optimizer, config.placement)
    constants = EnergyConstants()
    report = {"model": config.model, "gpu": gpu.name, "batch": config.batch,
              "dtype": config.dtype, "seq_len": graph.meta.get("seq_len"),
              "gpus": config.gpus, "policy": config.policy,
              "calibration": calibration.describe()}
    if config.gpus == 1:
        plan = plan_offload(graph, gpu, calibration, planner)
        e_base = _link_energy(baseline_energy(plan, constants), plan.memory,
                              plan.dram_bytes_baseline, constants)
        e_ndp = _link_energy(matndp_energy(plan, constants), plan.memory, plan.dram_bytes_gpu,
                             constants)
        report.update(_single(plan, e_base, e_ndp))
        report["memory_placement"] = plan.memory.describe()
        report["offload_optimizer"] = config.offload_optimizer
        return GpuRun(report, plan) if with_plan else report

    ndpx = NDPXNetConfig(config.gpus, expanders=config.expanders or config.gpus)
    local_graph = without_optimizer(graph)
    plan = plan_offload(local_graph, gpu, calibration, planner)
    by_phase = defaultdict(float)
    for entry in plan.baseline:
        by_phase[entry.phase] += entry.duration_s
    forward_end = max(e.end_s for e in plan.schedule if e.phase == "forward")
    optimizer_ops = [op for op in graph.ops if op.phase == "optimizer"]
    optimizer_gpu_s = sum(op_time_s(graph, op, gpu) for op in optimizer_ops)
    hardware = calibration.hardware
    expander_slices = ndpx.expander_channels * hardware.slices_per_controller
    lanes = hardware.lanes
    elements = sum(graph.tensors[op.attrs["parameter"]].elements for op in optimizer_ops)
    kernel = optimizer_ops[0].attrs["ndp_kernel"]
    reduction = expander_cost(kernel, config.gpus, calibration,
                              load_expander_calibration(config.expander_calibration_path))
    cycles = math.ceil(elements / lanes) * reduction.cycles_per_reduced_sector
    expander_compute_s = cycles / (hardware.clock_hz * expander_slices)
    last_gradient = next(op for op in reversed(graph.ops) if op.phase == "backward")
    last_bytes = sum(graph.tensor_bytes(t) for t in last_gradient.outputs
                     if graph.tensors[t].kind == "weight_gradient")
    base = simulate_ndpxnet(graph, gpu, ndpx, forward_s=by_phase["forward"],
                            backward_s=by_phase["backward"], optimizer_gpu_s=optimizer_gpu_s,
                            expander_optimizer_s=expander_compute_s,
                            last_gradient_bytes=last_bytes)
    with_ndp = simulate_ndpxnet(graph, gpu, ndpx, forward_s=forward_end,
                                backward_s=plan.matndp_s - forward_end,
                                optimizer_gpu_s=optimizer_gpu_s,
                                expander_optimizer_s=expander_compute_s,
                                last_gradient_bytes=last_bytes)
    baseline_s, matndp_s = base.baseline_s, with_ndp.ndpxnet_s
    offloaded = set(plan.offloaded)
    offloaded_s = sum(e.duration_s for e in plan.baseline if e.op in offloaded)
    share = (offloaded_s + optimizer_gpu_s + base.allreduce_exposed_s) / baseline_s

    # energy of the K-GPU system: K times one GPU, plus links and the expander
    full_plan_energy = baseline_energy(plan, constants)
    optimizer_j = sum(op.flops for op in optimizer_ops) * constants.fp32_pj_per_flop * 1e-12
    optimizer_bytes = sum(graph.op_bytes(op) for op in optimizer_ops)
    e_base = _scaled(_with_static(full_plan_energy, gpu, constants, baseline_s), config.gpus,
                     link_j=base.nvlink_bytes * 8 * constants.nvlink_pj_per_bit * 1e-12)
    e_base = dataclasses.replace(
        e_base, gpu_compute_j=e_base.gpu_compute_j + config.gpus * optimizer_j,
        dram_j=e_base.dram_j + config.gpus * optimizer_bytes * 8 * constants.dram_pj_per_bit * 1e-12,
        gpu_transport_j=e_base.gpu_transport_j
        + config.gpus * optimizer_bytes * 8 * constants.gpu_transport_pj_per_bit * 1e-12)
    local = _with_static(matndp_energy(plan, constants), gpu, constants, matndp_s,
                         plan.meta["ndp_slices"], ndp_slice_static_w(plan.calibration.hardware,
                                                                     constants))
    expander_bytes = base.expander_s * ndpx.expander_memory_gbs * 1e9 * ndpx.expanders
    e_ndp = _scaled(local, config.gpus,
                    link_j=with_ndp.expander_link_bytes * 8 * constants.cxl_pj_per_bit * 1e-12,
                    ndp_compute_j=cycles * constants.ndp_pj_per_instruction * 1e-12,
                    dram_j=expander_bytes * 8 * constants.dram_pj_per_bit * 1e-12,
                    # an expander slice: one sub-core's worth (docs/energy.md)
                    ndp_static_j=expander_slices * ndpx.expanders
                    * constants.ndp_static_w_per_sub_core * matndp_s)
    report.update({
        "baseline_s": baseline_s, "matndp_s": matndp_s, "speedup": baseline_s / matndp_s,
        "offloaded_share": share, "amdahl_bound": 1 / (1 - share) if share < 1 else math.inf,
        "breakdown": breakdown(plan),
        "dram_bytes_baseline": config.gpus * (plan.dram_bytes_baseline + optimizer_bytes),
        "dram_bytes_matndp": config.gpus * plan.dram_bytes_matndp + int(expander_bytes),
        "energy_j_baseline": e_base.total_j, "energy_j_matndp": e_ndp.total_j,
        "energy_baseline": e_base.as_dict(), "energy_matndp": e_ndp.as_dict(),
        "ndpxnet": {"baseline": base.as_dict(), "matndp": with_ndp.as_dict(),
                    "expander_optimizer_compute_s": expander_compute_s,
                    "expander_cost": reduction.as_dict()},
        "placements": _placement_counts(plan),
    })
    return GpuRun(report, plan) if with_plan else report


def _placement_counts(plan):
    counts = defaultdict(int)
    for placement in plan.placements.values():
        counts[placement.where] += 1
    return dict(counts)


def _single(plan, e_base, e_ndp):
    waiting = plan.matndp_s - sum(busy.end_s - busy.start_s for busy in plan.gpu_busy)
    return {
        "baseline_s": plan.baseline_s, "matndp_s": plan.matndp_s, "speedup": plan.speedup,
        "offloaded_share": plan.offloaded_share, "amdahl_bound": plan.amdahl_bound,
        "breakdown": breakdown(plan), "gpu_waiting_for_ndp_s": max(0.0, waiting),
        "dram_bytes_baseline": plan.dram_bytes_baseline,
        "dram_bytes_matndp": plan.dram_bytes_matndp,
        "energy_j_baseline": e_base.total_j, "energy_j_matndp": e_ndp.total_j,
        "energy_baseline": e_base.as_dict(), "energy_matndp": e_ndp.as_dict(),
        "placements": _placement_counts(plan),
        "partial_combines": _partial_combines(plan),
    }


def _partial_combines(plan):
    """The GPU's combines of the slices' partial reductions (:mod:`.offload.combine`)."""
    steps = combine_steps(plan)
    return {"steps": len(steps), "time_s": sum(step.time_s for step in steps),
            "matndp_s_with_combines": combined_iteration_s(plan, steps)}
