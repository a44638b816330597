"""``matndp gpu``: time training iterations on GPU presets, with and without matNDP."""


from matndp.host.gpu import PRESETS
from matndp.host.ndpxnet import MAX_GPUS
from matndp.host.offload.memory import MEMORY_PLACEMENTS
from matndp.host.offload.policies import OFFLOAD_POLICIES
from matndp.host.workload import TRACE_READERS
from matndp.host.zoo import MODELS

from matndp.host.units import format_bytes, format_joules, format_seconds

from matndp.sim.cli.arguments import integer, name_in
from matndp.sim.cli.model import add_model_options
from matndp.sim.cli.output import UsageError, add_result_options, output_file, warn, write_result, wrote


# Why a kind's GPU time can be longer in matNDP, said wherever it shows.
STRETCHED_NOTE = ("the on-the-fly NDP kernels riding on these ops' writes stretch them (the NDP "
                  "work and its memory traffic share the op's time); the ops those kernels "
                  "take over are gone from their own rows, so the iteration is shorter")


def run_presets(args):
    for preset in PRESETS.values():
        print(f"{preset.name}: FP32 {preset.fp32_tflops} TFLOPS, 16-bit tensor "
              f"{preset.tensor_tflops} TFLOPS, {preset.memory_gbs:g} GB/s, "
              f"{preset.capacity_gb:g} GB, {preset.memory_controllers} memory controllers")
    return 0


def warn_unknown_kernels(command, calibration):
    """Kernels a calibration file names that the model does not know are ignored: say so."""
    unknown = calibration.get("ignored_unknown_kernels") or []
    if unknown:
        warn(command, f"the calibration {calibration['source']} names kernels the model does "
                      f"not know, ignored: {', '.join(unknown)}")


def _print_report(report):
    gpus = report["gpus"]
    print(f"gpu run: {report['model']} batch {report['batch']} {report['dtype']} on "
          f"{gpus} x {report['gpu'].upper()}, offload policy {report['policy']} (NDP calibration: "
          f"{report['calibration']['source']})")
    memory = report.get("memory_placement", {})
    if memory.get("name") == "expander":
        print(f"  tensors and NDP in a memory expander: link {memory['link_gbs']:g} GB/s per "
              f"direction at {memory['link_efficiency']:.0%}, expander DRAM "
              f"{memory['expander_memory_gbs']:g} GB/s over {memory['expander_channels']} "
              "controllers (the baseline too)")
    print(f"  baseline      {format_seconds(report['baseline_s']):>10}")
    print(f"  matNDP        {format_seconds(report['matndp_s']):>10}   speedup {report['speedup']:.3f}x "
          f"(Amdahl bound {report['amdahl_bound']:.3f}x at offloaded share "
          f"{report['offloaded_share']:.1%})")
    combines = report.get("partial_combines")
    if combines and combines["steps"]:
        print(f"  combines      {format_seconds(combines['time_s']):>10}   the GPU combining the slices' "
              f"partials of {combines['steps']} reductions; with them matNDP "
              f"{format_seconds(combines['matndp_s_with_combines'])}")
    print(f"  DRAM traffic  {format_bytes(report['dram_bytes_baseline']):>10} -> "
          f"{format_bytes(report['dram_bytes_matndp'])}")
    print(f"  energy        {format_joules(report['energy_j_baseline']):>10} -> "
          f"{format_joules(report['energy_j_matndp'])}"
          + ("" if gpus == 1 else
             f"   (all {gpus} GPUs and their links, one iteration; per GPU "
             f"{format_joules(report['energy_j_baseline'] / gpus)} -> "
             f"{format_joules(report['energy_j_matndp'] / gpus)})"))
    if gpus > 1:
        cost = report["ndpxnet"]["expander_cost"]
        print(f"  expander      {cost['cycles_per_reduced_sector']:.1f} cycles per reduced sector "
              f"({cost['kernel']}, K = {cost['gpus']}; {cost['source']}: {cost['basis']})")
    print(f"  per op kind: GPU time as the baseline runs it and in matNDP, standalone NDP work "
          f"(overlapped with the GPU's), ops offloaded")
    print(f"  {'kind':<14}{'baseline ms':>12}{'matNDP GPU ms':>15}{'NDP ms':>9}{'offloaded ops':>15}")
    slower = []
    for kind, row in report["breakdown"].items():
        longer = row["matndp_gpu_s"] > row["baseline_s"] * (1 + 1e-9)
        if longer:
            slower.append(kind)
        print(f"  {kind:<14}{row['baseline_s'] * 1e3:12.3f}{row['matndp_gpu_s'] * 1e3:15.3f}"
              f"{'*' if longer else ' '}{row['matndp_ndp_s'] * 1e3:8.3f}{row['offloaded_ops']:15d}")
    if slower:
        print(f"  * longer in matNDP ({', '.join(slower)}): {STRETCHED_NOTE}")


def run_run(args):
    from matndp.host.report import RunConfig, run_gpu
    graph = None
    if args.trace:
        from matndp.host.workload import read_trace
        if args.batch is not None:
            raise UsageError("--batch sizes a zoo model; a trace has the batch it was recorded at")
        graph = read_trace(args.trace)
    elif args.batch is None:
        raise UsageError("give --batch for a zoo model")
    config = RunConfig(args.model or "", args.gpu, args.batch or 1, args.dtype, args.gpus,
                       args.seq_len, args.policy, args.calibration, placement=args.placement)
    report, plan = run_gpu(config, with_plan=True, graph=graph)
    warn_unknown_kernels("gpu run", report["calibration"])
    if args.plot:
        from matndp.host.plots import plot_run
        report["plot"] = str(plot_run(plan, report, args.plot))
        wrote(report["plot"])
    if not write_result(args, report):
        _print_report(report)
    return 0


def run_validate(args):
    from matndp.host.calibration import load_calibration
    from matndp.host.validation import validation_tables
    warn_unknown_kernels("gpu validate", load_calibration(args.calibration).describe())
    text = validation_tables(args.calibration)
    if args.output:
        from matndp.host.output import write_text
        wrote(write_text(args.output, text))
    else:
        print(text, end="")
    return 0


def register(subparsers):
    parser = subparsers.add_parser("gpu", help="GPU timing with and without matNDP",
                                   description=__doc__)
    commands = parser.add_subparsers(dest="gpu_command", metavar="COMMAND", required=True)
    presets = commands.add_parser("presets", help="list the GPU presets",
                                  description="List the GPU presets and their peaks.")
    presets.set_defaults(func=run_presets)

    run = commands.add_parser(
        "run", help="one training iteration, baseline vs matNDP",
        description="Time one training iteration of a zoo model (or of a workload of your "
                    "own: --trace) on a GPU preset, as a "
                    "plain GPU and with matNDP (on-the-fly and standalone NDP kernels), "
                    "the tensors in the GPU's memory or (--placement expander) in a memory "
                    "expander behind its off-chip link; with --gpus K > 1, data-parallel training with ring all-reduce vs "
                    "NDPXNet memory expanders. Batch is per GPU.")
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", type=name_in(MODELS), choices=MODELS.names, help="zoo model")
    source.add_argument("--trace", metavar="FORMAT:PATH",
                        help="a workload of your own: " + "; ".join(
                            f"{r.name}:PATH, {r.describes}" for r in TRACE_READERS.values())
                        + " (docs/workloads.md)")
    run.add_argument("--gpu", required=True, type=name_in(PRESETS, fold_case=True),
                     choices=PRESETS.names, help="GPU preset")
    run.add_argument("--batch", type=integer(1), help="batch size per GPU of a zoo model "
                                                       "(a trace has its own)")
    add_model_options(run)
    run.add_argument("--gpus", type=integer(1, MAX_GPUS), default=1,
                     help="data-parallel GPUs (default %(default)s)")
    run.add_argument("--policy", default="auto", type=name_in(OFFLOAD_POLICIES),
                     choices=OFFLOAD_POLICIES.names,
                     help="offload policy: " + "; ".join(f"{name}: {policy.help}" for name, policy
                                                         in OFFLOAD_POLICIES.items())
                          + " (default %(default)s)")
    run.add_argument("--placement", default="local", type=name_in(MEMORY_PLACEMENTS),
                     choices=MEMORY_PLACEMENTS.names,
                     help="where the tensors and the NDP sit (one GPU): "
                          + "; ".join(f"{name}: {placement.help}" for name, placement
                                      in MEMORY_PLACEMENTS.items())
                          + " (default %(default)s)")
    run.add_argument("--calibration", default=None, metavar="FILE",
                     help="NDP kernel calibration JSON (default build/calibration/"
                          "ndp_kernels.json when it exists, else documented defaults)")
    add_result_options(run, "the report", figure="a timeline + breakdown plot")
    run.set_defaults(func=run_run)

    validate = commands.add_parser(
        "validate", help="predictions beside published figures (docs/validation.md)",
        description="Configure the model like the published setups and print the "
                    "comparison tables of docs/validation.md as Markdown.")
    validate.add_argument("--calibration", default=None, metavar="FILE",
                          help="NDP kernel calibration JSON (default build/calibration/"
                               "ndp_kernels.json when it exists, else documented defaults)")
    validate.add_argument("--output", type=output_file, default=None, metavar="FILE",
                          help="write the Markdown to this file instead of standard output")
    validate.set_defaults(func=run_validate)
