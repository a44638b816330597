"""``matndp tier``: tiered HBM + flash memory for training.

``run`` simulates one workload (a zoo model, or a trace: ``--trace g10:DIR``,
``torch:FILE``, ``workload:FILE``) under one placement policy; ``--preset``, ``--config``
and ``--set`` give every tier parameter (``--preset g10`` is G10's published setup, with
host DRAM). ``export`` writes a workload file; ``sweep`` runs HBM fractions × policies ×
models and prints a table; ``validate-g10`` runs G10's five workloads from a G10 checkout.
Numbers are per iteration, in steady state: the last of at least ``--iterations``
simulated iterations (the timing monitor of ``tm`` may add a few until its plan settles).
"""

import sys

from matndp.host.gpu import PRESETS
from matndp.host.tier.flash import FLASH_PRESETS
from matndp.host.tier.policies import TIER_POLICIES
from matndp.host.tier.presets import SETUP_PRESETS
from matndp.host.workload import TRACE_READERS
from matndp.host.zoo import MODELS

from matndp.host.units import format_bytes, format_joules, format_seconds

from matndp.sim.cli.arguments import integer, name_in, names_in, number, numbers
from matndp.sim.cli.model import add_model_options
from matndp.sim.cli.output import add_result_options, write_result


RUN_KEYS = ("inter_tier_bytes", "flash_read_bytes", "flash_write_bytes", "stall_s",
            "iteration_s", "energy_j", "throughput_per_watt", "hbm_peak_bytes")

_fraction = number("HBM fraction")
# The most HBM one GPU carries today (eight 36 GB stacks); more is no real device, and its
# memory cost is then that of HBM that cannot be bought.
LARGEST_HBM_GB = 288
_hbm_gb = number("HBM size", unit="GB",
                 warn_above=(LARGEST_HBM_GB, f"is more than any GPU carries (at most "
                                             f"{LARGEST_HBM_GB} GB); memory_cost_usd prices it "
                                             f"as if it could be bought"))

# How each metric of ``tier run`` is printed.
_BYTES = format_bytes
METRIC_UNITS = {
    "inter_tier_bytes": _BYTES, "flash_read_bytes": _BYTES, "flash_write_bytes": _BYTES,
    "stall_s": format_seconds, "iteration_s": format_seconds, "energy_j": format_joules,
    "throughput_per_watt": lambda value: f"{value:.4g} samples/J",
    "hbm_peak_bytes": _BYTES, "hbm_capacity_bytes": _BYTES, "footprint_bytes": _BYTES,
    "memory_cost_usd": lambda value: f"${value:,.2f}",
}


def _hbm_size(args):
    if args.hbm_gb is None:
        return {"hbm_fraction": args.hbm_fraction}
    return {"hbm_bytes": int(args.hbm_gb * 1e9)}


# Defaults of the machine options for zoo runs without a setup (with one, an option given
# overrides the setup and one not given leaves it alone).
_MACHINE_DEFAULTS = {"gpu": "a100", "flash": "zssd", "flash_devices": 1, "link_gbs": 31.5,
                     "iterations": 3, "policy": "tm"}


def _given(args, name):
    value = getattr(args, name)
    return _MACHINE_DEFAULTS.get(name) if value is None else value


def _common(args):
    return {"gpu": _given(args, "gpu"), "batch": args.batch, "flash": _given(args, "flash"),
            "flash_devices": _given(args, "flash_devices"),
            "link_gbs": _given(args, "link_gbs"), "dtype": args.dtype,
            "seq_len": args.seq_len, "iterations": _given(args, "iterations")}


def _uses_setup(args):
    return bool(getattr(args, "trace", None) or args.preset or args.config or args.set)


def _setup(args):
    """The run's setup: preset, then the configuration file, then options given, then
    ``--set`` overrides."""
    from matndp.host.tier.presets import apply_overrides, load_setup, setup_preset
    if args.config:
        setup = load_setup(args.config, preset=args.preset)
    else:
        setup = setup_preset(args.preset or "default")
    options = []
    if args.hbm_gb is not None:
        options.append(f"tier.hbm_bytes={int(args.hbm_gb * 1e9)}")
    if args.hbm_fraction is not None:
        options.append(f"tier.hbm_fraction={args.hbm_fraction!r}")
    if args.link_gbs is not None:
        options.append(f"tier.link_bytes_per_s={args.link_gbs * 1e9!r}")
    if args.flash is not None:
        options.append(f"flash.preset={args.flash}")
    if args.flash_devices is not None:
        options.append(f"flash.devices={args.flash_devices}")
    for key in ("gpu", "iterations", "policy"):
        if getattr(args, key) is not None:
            options.append(f"run.{key}={getattr(args, key)!r}".replace("'", '"'))
    return apply_overrides(setup, options + list(args.set))


def _workload(args):
    if args.trace:
        from matndp.host.workload import read_trace
        return read_trace(args.trace)
    from matndp.host.zoo import build_model
    return build_model(args.model, batch=args.batch, dtype=args.dtype, seq_len=args.seq_len)


def run_setup(args):
    from matndp.host.tier.run import run_tier
    if args.plot:
        raise ValueError("--plot draws zoo runs without --trace, --preset, --config or --set")
    metrics = run_tier(_setup(args), _workload(args))
    _print_metrics(args, metrics)
    return 0


def _print_metrics(args, metrics):
    if not write_result(args, metrics):
        for key in RUN_KEYS + ("ideal_iteration_s", "hbm_capacity_bytes", "footprint_bytes",
                               "memory_cost_usd"):
            print(f"{key:24s} {METRIC_UNITS.get(key, format_seconds)(metrics[key])}")


def run_run(args):
    if _uses_setup(args):
        return run_setup(args)
    if args.model is None:
        raise ValueError("give --model or --trace")
    if args.hbm_fraction is None and args.hbm_gb is None:
        raise ValueError("give --hbm-fraction or --hbm-gb (or a setup: --preset, --config)")
    from matndp.host.tier.run import run_model
    size = _hbm_size(args)
    args.policy = _given(args, "policy")
    run = run_model(args.model, policy=args.policy, **size, **_common(args))
    metrics = run.metrics
    if args.plot:
        from matndp.host.tier.plot import plot_run
        from matndp.host.tier.plan import InfeasibleError
        by_policy = {}
        for policy in TIER_POLICIES:
            try:
                other = run if policy == args.policy else run_model(
                    args.model, policy=policy, **size, **_common(args))
            except InfeasibleError:
                continue              # a policy that cannot run this model has no bar
            by_policy[policy] = other.metrics
        path = plot_run(run, by_policy, args.plot)
        print(f"wrote {path}", file=sys.stderr)
    _print_metrics(args, metrics)
    return 0


def run_export(args):
    from matndp.host.workload import write_workload
    path = write_workload(_workload(args), args.output)
    print(f"wrote {path}", file=sys.stderr)
    return 0


def run_validate_g10(args):
    from matndp.host.tier.g10_validation import g10_batch_sizes, g10_validation
    text = g10_validation(args.g10_dir, progress=not args.no_progress)
    if args.batch_sizes:
        text += ("\nG10's batch-size figure, ideal / iteration time, G10's figure / ours:\n\n"
                 + g10_batch_sizes(args.g10_dir, progress=not args.no_progress))
    if args.output:
        from matndp.host.output import write_text
        print(f"wrote {write_text(args.output, text)}", file=sys.stderr)
    else:
        print(text, end="")
    return 0


def _table(rows):
    lines = [f"{'model':10s} {'HBM %':>6s} {'policy':6s} {'traffic GB':>10s} {'stall s':>9s} "
             f"{'iter s':>9s} {'samples/J':>10s} {'vs ideal':>8s}"]
    ideal = {(r["model"], r["hbm_fraction"]): r for r in rows
             if r.get("policy") == "ideal" and "infeasible" not in r}
    for r in rows:
        head = f"{r['model']:10s} {r['hbm_fraction'] * 100:6.1f} {r['policy']:6s}"
        if "infeasible" in r:
            lines.append(f"{head} infeasible: {r['infeasible']}")
            continue
        reference = ideal.get((r["model"], r["hbm_fraction"]))
        relative = f"{reference['iteration_s'] / r['iteration_s']:8.3f}" if reference else f"{'-':>8s}"
        lines.append(f"{head} {r['inter_tier_bytes'] / 1e9:10.3f} {r['stall_s']:9.4f} "
                     f"{r['iteration_s']:9.4f} {r['throughput_per_watt']:10.4f} {relative}")
    return "\n".join(lines)


def _relative_table(rows):
    """The published comparisons: tm against g10 and lru (traffic change, throughput per
    watt change) and g10 against ideal (ideal time / g10 time)."""
    by = {(r["model"], r["hbm_fraction"], r["policy"]): r for r in rows if "infeasible" not in r}
    keys = list(dict.fromkeys((r["model"], r["hbm_fraction"]) for r in rows))
    lines = [f"{'model':10s} {'HBM %':>6s} {'traffic tm/g10':>14s} {'tm/lru':>7s} "
             f"{'perf/W tm/g10':>13s} {'tm/lru':>7s} {'g10 vs ideal':>12s}"]

    def ratio(a, b, key):
        if a is None or b is None or not b[key]:
            return None
        return a[key] / b[key]

    def cell(value, width, percent):
        if value is None:
            return f"{'-':>{width}s}"
        return f"{(value - 1) * 100:+{width - 1}.0f}%" if percent else f"{value:{width}.3f}"

    for model, fraction in keys:
        tm, g10, lru, ideal = (by.get((model, fraction, p)) for p in ("tm", "g10", "lru", "ideal"))
        g10_vs_ideal = None if not (g10 and ideal) else ideal["iteration_s"] / g10["iteration_s"]
        lines.append(f"{model:10s} {fraction * 100:6.1f} "
                     f"{cell(ratio(tm, g10, 'inter_tier_bytes'), 14, True)} "
                     f"{cell(ratio(tm, lru, 'inter_tier_bytes'), 7, True)} "
                     f"{cell(ratio(tm, g10, 'throughput_per_watt'), 13, True)} "
                     f"{cell(ratio(tm, lru, 'throughput_per_watt'), 7, True)} "
                     f"{cell(g10_vs_ideal, 12, False)}")
    return "\n".join(lines)


def run_sweep(args):
    from matndp.host.tier.run import sweep
    rows = sweep(args.models, args.fractions, args.policies, progress=not args.no_progress,
                 **_common(args))
    if not write_result(args, rows):
        from matndp.host.tier.comparison import tm_against
        print(_table(rows))
        print()
        print(_relative_table(rows))
        if any(r["policy"] == "tm" for r in rows):
            print()
            print(tm_against(rows))
    if args.plot:
        from matndp.host.tier.plot import plot_sweep
        print(f"wrote {plot_sweep(rows, args.plot)}", file=sys.stderr)
    return 0


def _add_machine(parser, defaults):
    """The machine options; with ``defaults`` they have the zoo defaults, without (``run``)
    an option not given leaves a setup's value alone (the zoo defaults apply without one)."""
    def default(name):
        return _MACHINE_DEFAULTS[name] if defaults else None

    parser.add_argument("--gpu", default=default("gpu"), type=name_in(PRESETS, fold_case=True),
                        choices=PRESETS.names, help="GPU preset (default a100)")
    parser.add_argument("--batch", type=integer(1), default=8,
                        help="mini-batch size of a zoo model (default %(default)s)")
    add_model_options(parser)
    parser.add_argument("--flash", default=default("flash"), type=name_in(FLASH_PRESETS),
                        choices=FLASH_PRESETS.names, help="flash preset (default zssd)")
    parser.add_argument("--flash-devices", type=integer(1), default=default("flash_devices"),
                        help="identical flash devices striped together (default 1)")
    parser.add_argument("--link-gbs", type=number(), default=default("link_gbs"),
                        help="GPU link bandwidth per direction (to flash, and to host DRAM "
                             "when there is one), GB/s (default 31.5: PCIe 4.0 x16)")
    parser.add_argument("--iterations", type=integer(2), default=default("iterations"),
                        help="iterations simulated, at least 2 (the first one warms the tiers "
                             "up); the last is reported (default 3)")


def _add_setup(parser):
    parser.add_argument("--preset", type=name_in(SETUP_PRESETS), choices=SETUP_PRESETS.names,
                        help="tier setup to start from: default (two tiers, the options' "
                             "defaults) or g10 (G10's published setup: 40 GB GPU, 128 GB host "
                             "DRAM, 3.2 GB/s SSD, 15.754 GB/s PCIe)")
    parser.add_argument("--config", metavar="FILE.toml",
                        help="tier setup from a TOML file (docs/tiering.md); applied after "
                             "--preset")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one parameter (sections tier, flash, run; VALUE in "
                             "TOML syntax), e.g. tier.host_bytes=64e9; repeatable, applied last")


def register(subparsers):
    parser = subparsers.add_parser("tier", help="tiered HBM + flash memory for training",
                                   description=__doc__)
    commands = parser.add_subparsers(dest="tier_command", metavar="COMMAND", required=True)
    run = commands.add_parser("run", help="one workload under one placement policy")
    source = run.add_mutually_exclusive_group()
    source.add_argument("--model", type=name_in(MODELS), choices=MODELS.names,
                        help="zoo model")
    source.add_argument("--trace", metavar="FORMAT:PATH",
                        help="a recorded workload: " + "; ".join(
                            f"{r.name}:PATH, {r.describes}" for r in TRACE_READERS.values()))
    size = run.add_mutually_exclusive_group()
    size.add_argument("--hbm-fraction", type=_fraction,
                      help="HBM capacity as a fraction of the all-resident footprint, e.g. 0.25")
    size.add_argument("--hbm-gb", type=_hbm_gb,
                      help="HBM capacity in GB (1e9 bytes), e.g. 2.5")
    run.add_argument("--policy", type=name_in(TIER_POLICIES),
                     choices=TIER_POLICIES.names, help="placement policy (default tm)")
    _add_machine(run, defaults=False)
    _add_setup(run)
    add_result_options(run, "all metrics and the full configuration",
                       figure="tier occupancy, stalls and traffic per policy")
    run.set_defaults(func=run_run)
    export = commands.add_parser("export", help="write a workload file (zoo model or trace)")
    source = export.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", type=name_in(MODELS), choices=MODELS.names, help="zoo model")
    source.add_argument("--trace", metavar="FORMAT:PATH", help="a recorded workload, as for run")
    export.add_argument("--batch", type=integer(1), default=8,
                        help="mini-batch size of a zoo model (default %(default)s)")
    add_model_options(export)
    export.add_argument("--output", required=True, help="the workload file to write (JSON)")
    export.set_defaults(func=run_export)
    validate = commands.add_parser(
        "validate-g10", help="G10's five published workloads under its setup, beside its "
                             "published figures (needs a G10 checkout)")
    validate.add_argument("g10_dir", metavar="G10_DIR",
                          help="a local copy of github.com/platformxlab/G10 whose front end "
                               "has written kernels.config for the five workloads")
    validate.add_argument("--output", help="write the Markdown tables to this file")
    validate.add_argument("--no-progress", action="store_true", help="no progress bar")
    validate.add_argument("--batch-sizes", action="store_true",
                          help="also G10's batch-size figure, for every batch whose "
                               "kernels.config G10's front end has written (minutes)")
    validate.set_defaults(func=run_validate_g10)
    sweep = commands.add_parser("sweep", help="HBM fractions × policies × models, as a table")
    sweep.add_argument("--models", default="all", type=names_in(MODELS, every="all"),
                       help=f"comma-separated zoo models ({', '.join(MODELS)}), or all "
                            "(default all)")
    sweep.add_argument("--fractions", default="0.125,0.25,0.5", type=numbers(_fraction),
                       help="comma-separated HBM fractions (default %(default)s)")
    sweep.add_argument("--policies", default=",".join(TIER_POLICIES),
                       type=names_in(TIER_POLICIES),
                       help=f"comma-separated policies ({', '.join(TIER_POLICIES)}; "
                            "default all of them)")
    _add_machine(sweep, defaults=True)
    add_result_options(sweep, "the rows (instead of the tables)",
                       figure="traffic and throughput per watt plots")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep.set_defaults(func=run_sweep)
