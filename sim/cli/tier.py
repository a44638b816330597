"""``matndp tier``: tiered HBM + flash memory for training.

``run`` simulates one model under one placement policy; ``sweep`` runs HBM fractions ×
policies × models and prints a table. Numbers are per iteration, in steady state: the last
of at least ``--iterations`` simulated iterations (the timing monitor of ``tm`` may add a
few until its plan settles).
"""

import sys

from matndp.host.gpu import PRESETS
from matndp.host.tier.flash import FLASH_PRESETS
from matndp.host.tier.policies import TIER_POLICIES
from matndp.host.zoo import MODELS

from matndp.host.units import format_bytes, format_joules, format_seconds

from .arguments import integer, name_in, names_in, number, numbers
from .model import add_model_options
from .output import add_result_options, write_result


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


def _common(args):
    return {"gpu": args.gpu, "batch": args.batch, "flash": args.flash,
            "flash_devices": args.flash_devices, "link_gbs": args.link_gbs, "dtype": args.dtype,
            "seq_len": args.seq_len, "iterations": args.iterations}


def run_run(args):
    from matndp.host.tier.run import run_model
    size = _hbm_size(args)
    run = run_model(args.model, policy=args.policy, **size, **_common(args))
    metrics = run.metrics
    if args.plot:
        from matndp.host.tier.plot import plot_run
        by_policy = {}
        for policy in TIER_POLICIES:
            other = run if policy == args.policy else run_model(
                args.model, policy=policy, **size, **_common(args))
            by_policy[policy] = other.metrics
        path = plot_run(run, by_policy, args.plot)
        print(f"wrote {path}", file=sys.stderr)
    if not write_result(args, metrics):
        for key in RUN_KEYS + ("hbm_capacity_bytes", "footprint_bytes", "memory_cost_usd"):
            print(f"{key:24s} {METRIC_UNITS[key](metrics[key])}")
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
        print(_table(rows))
        print()
        print(_relative_table(rows))
    if args.plot:
        from matndp.host.tier.plot import plot_sweep
        print(f"wrote {plot_sweep(rows, args.plot)}", file=sys.stderr)
    return 0


def _add_machine(parser):
    parser.add_argument("--gpu", default="a100", type=name_in(PRESETS, fold_case=True),
                        choices=PRESETS.names, help="GPU preset (default %(default)s)")
    parser.add_argument("--batch", type=integer(1), default=8,
                        help="mini-batch size (default %(default)s)")
    add_model_options(parser)
    parser.add_argument("--flash", default="zssd", type=name_in(FLASH_PRESETS),
                        choices=FLASH_PRESETS.names, help="flash preset (default %(default)s)")
    parser.add_argument("--flash-devices", type=integer(1), default=1,
                        help="identical flash devices striped together (default %(default)s)")
    parser.add_argument("--link-gbs", type=number(), default=31.5,
                        help="HBM-flash link bandwidth per direction, GB/s "
                             "(default %(default)s: PCIe 4.0 x16)")
    parser.add_argument("--iterations", type=integer(2), default=3,
                        help="iterations simulated, at least 2 (the first one warms the tiers "
                             "up); the last is reported (default %(default)s)")


def register(subparsers):
    parser = subparsers.add_parser("tier", help="tiered HBM + flash memory for training",
                                   description=__doc__)
    commands = parser.add_subparsers(dest="tier_command", metavar="COMMAND", required=True)
    run = commands.add_parser("run", help="one model under one placement policy")
    run.add_argument("--model", required=True, type=name_in(MODELS), choices=MODELS.names,
                     help="zoo model")
    size = run.add_mutually_exclusive_group(required=True)
    size.add_argument("--hbm-fraction", type=_fraction,
                      help="HBM capacity as a fraction of the all-resident footprint, e.g. 0.25")
    size.add_argument("--hbm-gb", type=_hbm_gb,
                      help="HBM capacity in GB (1e9 bytes), e.g. 2.5")
    run.add_argument("--policy", default="tm", type=name_in(TIER_POLICIES),
                     choices=TIER_POLICIES.names, help="placement policy (default %(default)s)")
    _add_machine(run)
    add_result_options(run, "all metrics", figure="tier occupancy, stalls and traffic per policy")
    run.set_defaults(func=run_run)
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
    _add_machine(sweep)
    add_result_options(sweep, "the rows (instead of the tables)",
                       figure="traffic and throughput per watt plots")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep.set_defaults(func=run_sweep)
