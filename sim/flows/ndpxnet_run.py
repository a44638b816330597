"""``matndp sim --ndpxnet K``: K simulated GPUs write a real model's gradients, in the order
its backward pass produces them, into the expander slice's RTL, which sums them and runs
the optimizer (docs/ndpxnet-rtl.md, "A model's gradients through the RTL").

The host model gives the iteration: the model's weight gradients in the order the
backward pass writes them, grouped into buckets as data-parallel training groups them
(25 MiB, :class:`~matndp.host.ndpxnet.NDPXNetConfig`), the expanders' slices over which the
parameters spread, and the per-GPU timeline. One slice's share of each of the last
buckets (the ones written last, whose reduction is the one that can be exposed; as many
as the slice has filter entries) runs through the RTL, every GPU on its own port with its
own back-pressure and start: the GPUs write as fast as their ports take it, so the run
measures what the slice sustains. The updated weights and optimizer state are checked
bit for bit against the golden. The measured cost per reduced sector then prices the whole
model in the host model's NDPXNet, beside a ring all-reduce of the same gradients.
"""

from dataclasses import asdict, dataclass
import json
import pathlib
import random
import time

import numpy as np

from matndp.host.calibration import configuration_record, expander_calibration_document
from matndp.host.kernels.library import SECTOR_BYTES
from matndp.host.kernels.expander import MAX_GPUS, ReductionLaunch
from matndp.host.ndpxnet import NDPXNetConfig
from matndp.host.output import whole_folder, write_text
from matndp.host.report import RunConfig, run_gpu
from matndp.host.units import format_bytes, format_seconds
from matndp.host.zoo import MODELS, build_model
from matndp.host.zoo.builder import OPTIMIZERS
from matndp.sim.designs import EXPANDER_CONFIG
from matndp.sim.golden.expander import reduction_golden
from matndp.sim.flows.expander_run import GpuTiming, run_expander_rtl


__all__ = ["NDPXNetSetup", "Bucket", "gradient_buckets", "run_ndpxnet", "NDPXNetError"]


ELEMENTS_PER_SECTOR = SECTOR_BYTES // 4          # the expander's kernels work on FP32
# The optimizer step the RTL runs (its hyper-parameters are the library's defaults).
_STEP = 2


class NDPXNetError(Exception):
    """The run did not give a checked result (a wrong value is not a measurement)."""


@dataclass(frozen=True)
class NDPXNetSetup:
    """``gpus`` data-parallel GPUs training ``model`` at ``batch`` per GPU on ``gpu``
    (presets of the host model); ``bucket_sectors``: sectors of each bucket's share run
    through the RTL (``None``: the whole share); ``pressure``: each GPU port's probability
    of a pause per cycle (requests and responses, drawn per GPU around it); ``skew``:
    cycles by which the last GPU starts after the first (the others in between)."""

    gpus: int = 4
    model: str = "resnet50"
    batch: int = 32
    gpu: str = "a100"
    bucket_sectors: int | None = 64
    pressure: float = 0.2
    skew: int = 2000
    seed: int = 1

    def __post_init__(self):
        if not isinstance(self.gpus, int) or isinstance(self.gpus, bool) \
                or not 2 <= self.gpus <= MAX_GPUS:
            raise ValueError(f"--ndpxnet: the expander's reduction takes 2 to {MAX_GPUS} GPUs, "
                             f"not {self.gpus!r}")
        MODELS.lookup(self.model)
        if not isinstance(self.batch, int) or self.batch < 1:
            raise ValueError(f"--batch must be a positive integer, not {self.batch!r}")
        if self.bucket_sectors is not None and (not isinstance(self.bucket_sectors, int)
                                                or self.bucket_sectors < 1):
            raise ValueError(f"--bucket-sectors must be a positive integer or all, not "
                             f"{self.bucket_sectors!r}")
        if not 0 <= self.pressure < 1:
            raise ValueError(f"pressure must be in [0, 1), not {self.pressure!r}")
        if not isinstance(self.skew, int) or self.skew < 0:
            raise ValueError(f"skew must be a non-negative number of cycles, not {self.skew!r}")


@dataclass(frozen=True)
class Bucket:
    """A bucket of weight gradients, in the order the backward pass writes them:
    ``tensors``, their ``elements`` together, one slice's ``share`` of them (elements),
    and when the GPU writes them (``first_s`` … ``last_s``, the producing ops' span in the
    per-GPU schedule)."""

    index: int
    tensors: tuple
    elements: int
    share: int
    first_s: float
    last_s: float


def gradient_buckets(graph, plan, slices, bucket_bytes):
    """The weight gradients of ``graph`` in the order its backward pass writes them,
    grouped into buckets of at most ``bucket_bytes`` (a bigger tensor is a bucket of its
    own), each with one of ``slices`` slices' share."""
    times = {entry.op: entry for entry in plan.schedule}
    produced = [(op.name, tensor) for op in graph.ops if op.phase == "backward"
                for tensor in op.outputs if graph.tensors[tensor].kind == "weight_gradient"]
    groups, current, size = [], [], 0
    for op, tensor in produced:
        nbytes = graph.tensors[tensor].bytes
        if current and size + nbytes > bucket_bytes:
            groups.append(current)
            current, size = [], 0
        current.append((op, tensor))
        size += nbytes
    if current:
        groups.append(current)
    buckets = []
    for index, group in enumerate(groups):
        elements = sum(graph.tensors[tensor].elements for _, tensor in group)
        share = -(-elements // slices)
        buckets.append(Bucket(index, tuple(tensor for _, tensor in group), elements, share,
                              min(times[op].start_s for op, _ in group),
                              max(times[op].end_s for op, _ in group)))
    return buckets


def _rtl_optimizer(graph):
    kernel = next(op.attrs["ndp_kernel"] for op in graph.ops if op.phase == "optimizer")
    spec = next(spec for spec in OPTIMIZERS.values() if spec.ndp_kernel == kernel)
    return kernel, spec.name


def _timings(setup):
    rng = random.Random(setup.seed)
    last = setup.gpus - 1
    return [GpuTiming(pressure=setup.pressure * rng.choice((0.5, 1.0, 1.5)),
                      response_pressure=setup.pressure * rng.choice((0.5, 1.0, 1.5)),
                      delay=round(setup.skew * port / last))
            for port in range(setup.gpus)]


def _check(run, launches, grads, states):
    result = run.result
    if result["error"] is not None:
        raise NDPXNetError(f"the expander's engine recorded an error: {result['error']}")
    if not result["complete"]:
        raise NDPXNetError(f"not every bucket completed: {result['entries']}")
    if result["stream_rule_violations"]:
        raise NDPXNetError(f"{result['stream_rule_violations']} stream rule violations")
    for index, launch in enumerate(launches):
        for name, values in reduction_golden(launch, grads[index], states[index]).items():
            got = run.outputs[index][name].view(np.uint32)
            differing = np.flatnonzero(got != values.view(np.uint32))
            if differing.size:
                raise NDPXNetError(f"bucket {index}: {name} differs from the golden in "
                                   f"{differing.size} elements (first at {differing[:4].tolist()})")


def run_ndpxnet(output, setup=None, *, simulator="verilator", progress=print):
    """Run ``setup`` (an :class:`NDPXNetSetup`) and write ``report.json`` and
    ``report.md`` into ``output``; returns the report."""
    setup = setup or NDPXNetSetup()
    output = pathlib.Path(output)
    started = time.monotonic()
    host_config = RunConfig(setup.model, setup.gpu, setup.batch, "fp32", gpus=setup.gpus)
    host = run_gpu(host_config, with_plan=True)
    graph = build_model(setup.model, batch=setup.batch)
    ndpx = NDPXNetConfig(setup.gpus, expanders=setup.gpus)
    hardware_slices = host.report["calibration"]["slices_per_controller"]
    slices = ndpx.expanders * ndpx.expander_channels * hardware_slices
    buckets = gradient_buckets(graph, host.plan, slices, ndpx.bucket_bytes)
    kernel, optimizer = _rtl_optimizer(graph)
    entries = EXPANDER_CONFIG.trigger.filter_entries
    run_buckets = buckets[-entries:]
    launches = []
    for bucket in run_buckets:
        sectors = -(-bucket.share // ELEMENTS_PER_SECTOR)
        if setup.bucket_sectors is not None:
            sectors = min(sectors, setup.bucket_sectors)
        launches.append(ReductionLaunch(optimizer, sectors * ELEMENTS_PER_SECTOR, setup.gpus,
                                        {"step": _STEP}))
    inputs = [launch.random_inputs(setup.seed + 100 * index) for index, launch in enumerate(launches)]
    grads, states = [g for g, _ in inputs], [s for _, s in inputs]
    sectors = sum(launch.copy_bytes // SECTOR_BYTES for launch in launches)
    with whole_folder(output) as work:
        progress(f"sim: {setup.gpus} GPUs write {len(launches)} of {len(buckets)} buckets' share "
                 f"({sum(launch.elements for launch in launches):,} elements per GPU) into the "
                 f"expander slice")
        run = run_expander_rtl(launches, grads, states, gpus=_timings(setup), seed=setup.seed,
                               simulator=simulator, directory=work / "run",
                               cycle_limit=max(400_000, 400 * setup.gpus * sectors))
        _check(run, launches, grads, states)
        result = run.result
        done = max(entry["done_cycle"] for entry in result["entries"])
        busy = done - result["first_gradient_write_cycle"]
        accesses = result["gpu_memory_requests"] + result["ndp_reads"] + result["ndp_writes"]
        measured = {
            "buckets_run": [bucket.index for bucket in run_buckets],
            "sectors_per_copy": sectors,
            "gradient_writes": setup.gpus * sectors,
            "cycles": result["finished_cycle"] - result["armed_cycle"],
            "cycles_first_write_to_ready": busy,
            "cycles_last_write_to_ready": done - result["last_gradient_write_cycle"],
            "cycles_per_reduced_sector": busy / sectors,
            "memory_accesses_per_reduced_sector": accesses / sectors,
            "bucket_done_cycles": [entry["done_cycle"] - result["armed_cycle"] for entry in result["entries"]],
            "bit_exact": True,
        }
        # The whole model priced with this run's cost per reduced sector.
        calibration = work / "expander_calibration.json"
        point = (measured["cycles_per_reduced_sector"], measured["memory_accesses_per_reduced_sector"])
        write_text(calibration, json.dumps(expander_calibration_document(
            {kernel: {setup.gpus: point}}, source=f"matndp sim --ndpxnet {setup.gpus}",
            ndp_config=configuration_record(EXPANDER_CONFIG)), indent=2) + "\n")
        priced = run_gpu(RunConfig(setup.model, setup.gpu, setup.batch, "fp32", gpus=setup.gpus,
                                   expander_calibration_path=str(calibration)))
        # The cost's source names the file where it will be, not where it is written.
        priced["ndpxnet"]["expander_cost"]["source"] = str(output / calibration.name)
        report = _report(setup, graph, buckets, slices, kernel, optimizer, measured, priced,
                         host.report["ndpxnet"]["expander_cost"])
        report["wall_s"] = time.monotonic() - started
        write_text(work / "report.json", json.dumps(report, indent=2) + "\n")
        write_text(work / "report.md", report_markdown(report))
    return report


def _report(setup, graph, buckets, slices, kernel, optimizer, measured, priced, assumed):
    ndpxnet = priced["ndpxnet"]
    base, ours = ndpxnet["baseline"], ndpxnet["matndp"]
    clock = priced["calibration"]["clock_hz"]
    grads = sum(t.bytes for t in graph.tensors.values() if t.kind == "weight_gradient")
    per_slice_sectors = sum(-(-bucket.share // ELEMENTS_PER_SECTOR) for bucket in buckets)
    model_sectors = per_slice_sectors * slices
    return {
        "setup": asdict(setup), "optimizer": {"host_kernel": kernel, "rtl": optimizer},
        "slices": slices, "clock_hz": clock,
        "buckets": [asdict(bucket) for bucket in buckets],
        "rtl": measured,
        "whole_model": {
            "gradient_bytes": grads,
            "share_sectors_per_slice": per_slice_sectors,
            "expander_compute_s": per_slice_sectors * measured["cycles_per_reduced_sector"] / clock,
            "expander_memory_bytes_measured_rate": int(model_sectors * measured["memory_accesses_per_reduced_sector"] * SECTOR_BYTES),
            "gpu_memory_freed_bytes": ours["memory_saved_per_gpu_bytes"],
            "ring_allreduce_s": base["allreduce_s"],
            "ring_allreduce_exposed_s": base["allreduce_exposed_s"],
            "gpu_optimizer_s": base["optimizer_gpu_s"],
            "baseline_exposed_s": base["allreduce_exposed_s"] + base["optimizer_gpu_s"],
            "ndpxnet_exposed_s": ours["ndpxnet_exposed_s"],
            "baseline_iteration_s": priced["baseline_s"],
            "ndpxnet_iteration_s": priced["matndp_s"],
            "speedup": priced["speedup"],
            "expander_cost": ndpxnet["expander_cost"],
            "expander_cost_assumed_before": assumed,
        },
    }


def report_markdown(report):
    setup, rtl, whole = report["setup"], report["rtl"], report["whole_model"]
    buckets = report["buckets"]
    lines = [
        f"# NDPXNet through the RTL: {setup['model']}, {setup['gpus']} GPUs",
        "",
        f"{setup['gpus']} × {setup['gpu']} GPUs, batch {setup['batch']} per GPU, FP32, optimizer "
        f"`{report['optimizer']['rtl']}`; the parameters spread over {report['slices']} expander "
        f"slices ({setup['gpus']} expanders). {len(buckets)} gradient buckets in the backward "
        f"pass's order; the RTL ran one slice's share of buckets "
        f"{', '.join(map(str, rtl['buckets_run']))}"
        + ("" if setup["bucket_sectors"] is None else f", at most {setup['bucket_sectors']} sectors of each")
        + f": {rtl['sectors_per_copy']} sectors per GPU, {rtl['gradient_writes']} gradient writes, "
        f"each GPU with its own back-pressure (around {setup['pressure']}) and the last starting "
        f"{setup['skew']} cycles after the first. Updated weights and optimizer state: bit-exact "
        f"against the golden.",
        "",
        "## Measured on the RTL",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| cycles, arming to the end | {rtl['cycles']:,} |",
        f"| cycles, first gradient write to every bucket ready | {rtl['cycles_first_write_to_ready']:,} |",
        f"| cycles, last gradient write to every bucket ready | {rtl['cycles_last_write_to_ready']:,} |",
        f"| cycles per reduced sector (K sectors summed, optimizer step) | {rtl['cycles_per_reduced_sector']:.1f} |",
        f"| memory accesses per reduced sector | {rtl['memory_accesses_per_reduced_sector']:.2f} |",
        "",
        "## The whole model, priced with that cost",
        "",
        "| figure | ring all-reduce, optimizer on the GPUs | NDPXNet |",
        "|---|---:|---:|",
        f"| reduction + optimizer, all of it | {format_seconds(whole['ring_allreduce_s'])} ring + "
        f"{format_seconds(whole['gpu_optimizer_s'])} optimizer | "
        f"{format_seconds(whole['expander_compute_s'])} (every slice its share, side by side) |",
        f"| exposed reduction + optimizer | {format_seconds(whole['baseline_exposed_s'])} "
        f"({format_seconds(whole['ring_allreduce_exposed_s'])} all-reduce + "
        f"{format_seconds(whole['gpu_optimizer_s'])} optimizer) | {format_seconds(whole['ndpxnet_exposed_s'])} |",
        f"| iteration | {format_seconds(whole['baseline_iteration_s'])} | "
        f"{format_seconds(whole['ndpxnet_iteration_s'])} ({whole['speedup']:.3f}×) |",
        f"| expander memory traffic: gradient writes, reduction, optimizer step | – | "
        f"{format_bytes(whole['expander_memory_bytes_measured_rate'])} |",
        f"| GPU memory freed, per GPU | – | {format_bytes(whole['gpu_memory_freed_bytes'])} |",
        "",
        f"Expander cost: {whole['expander_cost']['cycles_per_reduced_sector']:.1f} cycles per "
        f"reduced sector from this run (without it the host model prices "
        f"{whole['expander_cost_assumed_before']['cycles_per_reduced_sector']:.1f}, from "
        f"{whole['expander_cost_assumed_before']['source']}). The NDPXNet iteration also has "
        f"matNDP's offload on each GPU; the baseline is the GPUs alone (docs/validation.md "
        f"separates the two). The GPUs wrote as fast as their "
        f"ports took it, so the run measures what a slice sustains; in training the writes "
        f"come at the backward pass's pace, and the host model prices the exposed part from "
        f"that pace and this cost (docs/ndpxnet-rtl.md).",
        "",
        "## Buckets",
        "",
        "| bucket | tensors | elements | one slice's share | written (ms into the iteration) |",
        "|---:|---:|---:|---:|---|",
    ]
    for bucket in buckets:
        lines.append(f"| {bucket['index']} | {len(bucket['tensors'])} | {bucket['elements']:,} | "
                     f"{bucket['share']:,} | {bucket['first_s'] * 1e3:.2f}–{bucket['last_s'] * 1e3:.2f} |")
    return "\n".join(lines) + "\n"
