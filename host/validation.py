"""The comparison tables of docs/validation.md: the model configured like published setups,
its predictions beside the published figures. ``matndp gpu validate`` prints them."""

import dataclasses
import statistics

from .calibration import load_calibration
from .gpu import PRESETS, baseline_timeline
from .offload import memory_placement
from .report import RunConfig, run_gpu
from .zoo import build_model


__all__ = ["scaled_v100", "validation_tables", "runtime_shares", "TIMING_COLUMNS",
           "timing_cells", "EXPANDER_ROWS", "NDPXNET_WORKLOADS"]


def scaled_v100():
    """The NDPX / XLA-NDP simulation setup: a V100 cut to 20 SMs at 1380 MHz (of 80 SMs at
    1530 MHz boost) and 8 HBM2 channels (of 32)."""
    v100 = PRESETS["v100"]
    compute = 20 / 80 * 1380 / 1530
    return dataclasses.replace(v100, name="v100-20sm", fp32_tflops=v100.fp32_tflops * compute,
                               tensor_tflops=v100.tensor_tflops * compute,
                               memory_gbs=v100.memory_gbs * 8 / 32)


# Ivanov et al. classes: tensor contractions, statistical normalizations (softmax,
# layer-norm, batch-norm), element-wise.
_CLASSES = {"gemm": "tensor contraction", "conv": "tensor contraction",
            "normalization": "normalization", "softmax": "normalization",
            "elementwise": "element-wise"}


def runtime_shares(graph, gpu, select=lambda op: True):
    """FLOP and runtime share per operator class over the selected ops."""
    times = {e.op: e.duration_s for e in baseline_timeline(graph, gpu)}
    ops = [op for op in graph.ops if select(op)]
    flops, runtime = {}, {}
    for op in ops:
        group = _CLASSES.get(op.kind, "other")
        flops[group] = flops.get(group, 0) + op.flops
        runtime[group] = runtime.get(group, 0.0) + times[op.name]
    total_f, total_t = sum(flops.values()), sum(runtime.values())
    return {g: (flops[g] / total_f, runtime[g] / total_t) for g in sorted(flops)}


def _row(*cells):
    return "| " + " | ".join(str(c) for c in cells) + " |\n"


def _run(model, gpu, batch, dtype, policy, calibration_path, seq_len=None, slices=None,
         placement="local", offload_optimizer=True):
    return run_gpu(RunConfig(model, gpu, batch, dtype, 1, seq_len, policy, calibration_path,
                             ndp_slices_per_controller=slices, placement=placement,
                             offload_optimizer=offload_optimizer))


TIMING_COLUMNS = ("baseline ms", "matNDP ms", "speedup", "offloaded share", "Amdahl bound")


def timing_cells(report):
    """The :data:`TIMING_COLUMNS` cells of a run's report."""
    return (f"{report['baseline_s'] * 1e3:.1f}", f"{report['matndp_s'] * 1e3:.1f}",
            f"{report['speedup']:.3f}", f"{report['offloaded_share']:.1%}",
            f"{report['amdahl_bound']:.3f}")


# The NDPX rows in the expander placement, per batch and dtype: policy, whether the
# optimizer step may run on the NDP, NDP slices per controller as a multiple of the default.
EXPANDER_ROWS = (("auto", True, 1), ("all", True, 4), ("auto", False, 1))

# The NDPXNet rows: model, batch per GPU, sequence length.
NDPXNET_WORKLOADS = (("resnet50", 64, None), ("bert-base", 32, 128))


def validation_tables(calibration_path=None):
    calibration = load_calibration(calibration_path)
    gpu = scaled_v100()
    out = [f"NDP calibration: {calibration.describe()['source']}; scaled GPU: "
           f"{gpu.fp32_tflops:.2f} FP32 / {gpu.tensor_tflops:.1f} FP16 TFLOPS, "
           f"{gpu.memory_gbs:.0f} GB/s, {gpu.memory_controllers} controllers.\n\n"]

    out.append("### NDPX: VGG-16-BN training (published 1.51x)\n\n")
    out.append(_row("batch", "dtype", "policy", "NDP slices / controller", *TIMING_COLUMNS))
    out.append(_row(*["---"] * 9))
    default_slices = calibration.hardware.slices_per_controller
    for batch in (16, 64):
        for dtype in ("fp16", "fp32"):
            for policy, slices in (("auto", None), ("all", None), ("all", 4 * default_slices)):
                r = _run("vgg16_bn", gpu, batch, dtype, policy, calibration_path, slices=slices)
                out.append(_row(batch, dtype, policy, r["calibration"]["slices_per_controller"],
                                *timing_cells(r)))

    expander = memory_placement("expander", gpu)
    out.append("\n### NDPX placement: VGG-16-BN with its tensors in a memory expander\n\n")
    out.append(f"Link {expander.expander.link_gbs:g} GB/s per direction at "
               f"{expander.expander.link_efficiency:.0%}; expander DRAM "
               f"{expander.expander.expander_memory_gbs:g} GB/s over "
               f"{expander.ndp_controllers} controllers with NDP slices; the baseline is the "
               "same GPU and expander without NDP.\n\n")
    out.append(_row("batch", "dtype", "policy", "optimizer on", "NDP slices / controller",
                    *TIMING_COLUMNS))
    out.append(_row(*["---"] * 10))
    for batch in (16, 64):
        for dtype in ("fp16", "fp32"):
            for policy, offload_optimizer, more in EXPANDER_ROWS:
                slices = None if more == 1 else more * default_slices
                r = _run("vgg16_bn", gpu, batch, dtype, policy, calibration_path, slices=slices,
                         placement="expander", offload_optimizer=offload_optimizer)
                out.append(_row(batch, dtype, policy, "NDP" if offload_optimizer else "GPU",
                                r["calibration"]["slices_per_controller"], *timing_cells(r)))

    out.append("\n### NDPXNet: data-parallel training with the gradients reduced in memory expanders\n\n")
    out.append("Published (matNDP): gradient reduction and the optimizer leave the GPUs entirely. "
               "A100 presets, fp16 mixed precision, one expander per GPU, policy auto.\n\n")
    out.append(_row("model", "batch", "GPUs", "expander cycles / reduced sector",
                    "exposed: all-reduce + GPU optimizer ms", "exposed: NDPXNet ms",
                    "baseline ms", "NDPXNet ms", "speedup", "GPU memory freed / GPU"))
    out.append(_row(*["---"] * 10))
    for model, batch, seq_len in NDPXNET_WORKLOADS:
        for gpus in (4, 8):
            r = run_gpu(RunConfig(model, "a100", batch, "fp16", gpus, seq_len, "auto",
                                  calibration_path))
            base, ours = r["ndpxnet"]["baseline"], r["ndpxnet"]["matndp"]
            cost = r["ndpxnet"]["expander_cost"]
            source = "RTL" if cost["source"] != "assumption" else "assumed"
            out.append(_row(model, batch, gpus, f"{cost['cycles_per_reduced_sector']:.1f} ({source})",
                            f"{(base['allreduce_exposed_s'] + base['optimizer_gpu_s']) * 1e3:.2f}",
                            f"{ours['ndpxnet_exposed_s'] * 1e3:.3f}",
                            f"{r['baseline_s'] * 1e3:.1f}", f"{r['matndp_s'] * 1e3:.1f}",
                            f"{r['speedup']:.3f}",
                            f"{ours['memory_saved_per_gpu_bytes'] / 2**20:.0f} MiB"))

    out.append("\n### XLA-NDP: four training workloads (published 1.24x mean, 1.41x best)\n\n")
    out.append(_row("model", "batch", "speedup (auto)", "speedup (all)", "offloaded share",
                    "Amdahl bound"))
    out.append(_row(*["---"] * 6))
    workloads = (("resnet50", 64, None), ("vgg16_bn", 32, None), ("bert-base", 32, 128),
                 ("gpt2", 8, 512))
    speedups = []
    for model, batch, seq_len in workloads:
        auto = _run(model, gpu, batch, "fp16", "auto", calibration_path, seq_len)
        every = _run(model, gpu, batch, "fp16", "all", calibration_path, seq_len)
        speedups.append(auto["speedup"])
        out.append(_row(model, batch, f"{auto['speedup']:.3f}", f"{every['speedup']:.3f}",
                        f"{auto['offloaded_share']:.1%}", f"{auto['amdahl_bound']:.3f}"))
    out.append(_row("**mean / geometric mean / best**", "",
                    f"{statistics.mean(speedups):.3f} / {statistics.geometric_mean(speedups):.3f}"
                    f" / {max(speedups):.3f}", "", "", ""))

    out.append("\n### Where BERT training time goes (Ivanov et al.: BERT-large layer, V100)\n\n")
    bert = build_model("bert-base", batch=8, dtype="fp16", seq_len=512)
    shares = runtime_shares(bert, PRESETS["v100"], lambda op: ".layer." in op.name
                            and op.phase != "optimizer")
    published = {"tensor contraction": ("99.80 %", "61.0 %"),
                 "normalization": ("0.17 %", "25.5 %"), "element-wise": ("0.03 %", "13.5 %")}
    out.append(_row("class", "FLOP share (ours)", "FLOP share (published)",
                    "runtime share (ours)", "runtime share (published)"))
    out.append(_row(*["---"] * 5))
    for group, (f, t) in shares.items():
        pf, pt = published.get(group, ("-", "-"))
        out.append(_row(group, f"{f:.2%}", pf, f"{t:.1%}", pt))

    out.append("\n### Where ResNet-50 training time goes (V100, batch 64, forward + backward)\n\n")
    out.append(_row("dtype", "class", "FLOP share", "runtime share"))
    out.append(_row(*["---"] * 4))
    for dtype in ("fp32", "fp16"):
        resnet = build_model("resnet50", batch=64, dtype=dtype)
        shares = runtime_shares(resnet, PRESETS["v100"], lambda op: op.phase != "optimizer")
        for group, (f, t) in shares.items():
            out.append(_row(dtype, group, f"{f:.2%}", f"{t:.1%}"))

    out.append("\n### matNDP on the full presets (fp16 mixed precision, policy auto)\n\n")
    out.append(_row("model", "batch", "GPU", "baseline ms", "matNDP ms", "speedup",
                    "Amdahl bound", "DRAM bytes saved", "energy saved"))
    out.append(_row(*["---"] * 9))
    for model, batch, seq_len in workloads:
        for name in (n for n in PRESETS if PRESETS[n].kind == "gpu"):
            r = _run(model, name, batch, "fp16", "auto", calibration_path, seq_len)
            out.append(_row(model, batch, name, f"{r['baseline_s'] * 1e3:.1f}",
                            f"{r['matndp_s'] * 1e3:.1f}", f"{r['speedup']:.3f}",
                            f"{r['amdahl_bound']:.3f}",
                            f"{1 - r['dram_bytes_matndp'] / r['dram_bytes_baseline']:.1%}",
                            f"{1 - r['energy_j_matndp'] / r['energy_j_baseline']:.1%}"))
    return "".join(out)
