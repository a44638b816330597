"""``matndp tier``: tiered HBM + flash memory for training.

``run`` simulates one model under one placement policy; ``sweep`` runs HBM fractions ×
policies × models and prints a table. Numbers are per iteration, in steady state: the last
of at least ``--iterations`` simulated iterations (the timing monitor of ``tm`` may add a
few until its plan settles).
"""

import json
import sys


POLICY_NAMES = ("ideal", "lru", "g10", "tm")
RUN_KEYS = ("inter_tier_bytes", "flash_read_bytes", "flash_write_bytes", "stall_s",
            "iteration_s", "energy_j", "throughput_per_watt", "hbm_peak_bytes")


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"HBM fraction must be a number, got {text!r}") from None
    if not value > 0:
        raise ValueError(f"HBM fraction must be > 0, got {value}")
    return value


def _hbm_size(args):
    if args.hbm_gb is None:
        return {"hbm_fraction": _fraction(args.hbm_fraction)}
    try:
        gigabytes = float(args.hbm_gb)
    except ValueError:
        raise ValueError(f"HBM size must be a number of GB, got {args.hbm_gb!r}") from None
    if not gigabytes > 0:
        raise ValueError(f"HBM size must be > 0 GB, got {gigabytes}")
    return {"hbm_bytes": int(gigabytes * 1e9)}


def _common(args):
    return {"gpu": args.gpu, "batch": args.batch, "flash": args.flash,
            "flash_devices": args.flash_devices, "link_gbs": args.link_gbs, "dtype": args.dtype,
            "seq_len": args.seq_len, "iterations": args.iterations}


def _check_counts(args):
    if args.batch < 1:
        raise ValueError(f"--batch must be >= 1, got {args.batch}")
    if args.flash_devices < 1:
        raise ValueError(f"--flash-devices must be >= 1, got {args.flash_devices}")
    if not args.link_gbs > 0:
        raise ValueError(f"--link-gbs must be > 0, got {args.link_gbs}")
    if args.iterations < 2:
        raise ValueError(f"--iterations must be >= 2 (the first one warms the tiers up), got {args.iterations}")


def run_run(args):
    from matndp.host.tier.run import run_model
    _check_counts(args)
    size = _hbm_size(args)
    if args.policy not in POLICY_NAMES:
        raise ValueError(f"unknown policy {args.policy!r}; known: {', '.join(POLICY_NAMES)}")
    run = run_model(args.model, policy=args.policy, **size, **_common(args))
    metrics = run.metrics
    if args.plot:
        from matndp.host.tier.plot import plot_run
        by_policy = {}
        for policy in POLICY_NAMES:
            other = run if policy == args.policy else run_model(
                args.model, policy=policy, **size, **_common(args))
            by_policy[policy] = other.metrics
        path = plot_run(run, by_policy, args.plot)
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(metrics, indent=2, sort_keys=True))
    else:
        for key in RUN_KEYS + ("hbm_capacity_bytes", "footprint_bytes", "memory_cost_usd"):
            print(f"{key:24s} {metrics[key]:.6g}")
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
    from matndp.host.zoo import MODEL_NAMES
    _check_counts(args)
    models = MODEL_NAMES if args.models == "all" else tuple(m.strip() for m in args.models.split(","))
    fractions = [_fraction(f) for f in args.fractions.split(",")]
    policies = [p.strip() for p in args.policies.split(",")]
    for policy in policies:
        if policy not in POLICY_NAMES:
            raise ValueError(f"unknown policy {policy!r}; known: {', '.join(POLICY_NAMES)}")
    rows = sweep(models, fractions, policies, progress=not args.no_progress, **_common(args))
    print(_table(rows))
    print()
    print(_relative_table(rows))
    if args.json:
        from matndp.host.output import write_text
        path = write_text(args.json, json.dumps(rows, indent=2, sort_keys=True) + "\n")
        print(f"wrote {path}", file=sys.stderr)
    if args.plot:
        from matndp.host.tier.plot import plot_sweep
        print(f"wrote {plot_sweep(rows, args.plot)}", file=sys.stderr)
    return 0


def _add_machine(parser):
    parser.add_argument("--gpu", default="a100", help="GPU preset: v100, a100, h100 (default a100)")
    parser.add_argument("--batch", type=int, default=8, help="mini-batch size (default 8)")
    parser.add_argument("--dtype", default="fp32", help="tensor dtype of the model (default fp32)")
    parser.add_argument("--seq-len", type=int, default=None, help="sequence length (transformers)")
    parser.add_argument("--flash", default="zssd", help="flash preset: zssd or tlc (default zssd)")
    parser.add_argument("--flash-devices", type=int, default=1,
                        help="identical flash devices striped together (default 1)")
    parser.add_argument("--link-gbs", type=float, default=31.5,
                        help="HBM-flash link bandwidth per direction, GB/s (default 31.5: PCIe 4.0 x16)")
    parser.add_argument("--iterations", type=int, default=3,
                        help="iterations simulated; the last is reported (default 3)")


def register(subparsers):
    parser = subparsers.add_parser("tier", help="tiered HBM + flash memory for training",
                                   description=__doc__)
    commands = parser.add_subparsers(dest="tier_command", metavar="COMMAND", required=True)
    run = commands.add_parser("run", help="one model under one placement policy")
    run.add_argument("--model", required=True, help="zoo model: resnet50, vgg16_bn, bert-base, gpt2")
    size = run.add_mutually_exclusive_group(required=True)
    size.add_argument("--hbm-fraction",
                      help="HBM capacity as a fraction of the all-resident footprint, e.g. 0.25")
    size.add_argument("--hbm-gb", help="HBM capacity in GB (1e9 bytes), e.g. 2.5")
    run.add_argument("--policy", default="tm", help="ideal, lru, g10 or tm (default tm)")
    _add_machine(run)
    run.add_argument("--json", action="store_true", help="print all metrics as JSON")
    run.add_argument("--plot", help="write tier occupancy and traffic per policy to this image")
    run.set_defaults(func=run_run)
    sweep = commands.add_parser("sweep", help="HBM fractions × policies × models, as a table")
    sweep.add_argument("--models", default="all", help="comma-separated zoo models, or all")
    sweep.add_argument("--fractions", default="0.125,0.25,0.5", help="comma-separated HBM fractions")
    sweep.add_argument("--policies", default=",".join(POLICY_NAMES), help="comma-separated policies")
    _add_machine(sweep)
    sweep.add_argument("--json", help="write the rows as JSON to this file")
    sweep.add_argument("--plot", help="write traffic and throughput per watt plots to this image")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep.set_defaults(func=run_sweep)
