"""``tm`` against every other placement policy, and where TM-Training's published claims
stand: per point (workload and HBM size) the change in inter-tier traffic and in
throughput per watt that ``tm`` brings over each policy, and per policy the range and
median of those changes beside the claims (64 % less inter-tier traffic and 55 % more
throughput per watt than prior work, Park et al., ACM TOS 2025)."""

from statistics import median

from .policies import POLICIES


__all__ = ["PUBLISHED_TRAFFIC_CHANGE", "PUBLISHED_PERF_PER_WATT_CHANGE", "baselines",
           "tm_against"]

PUBLISHED_TRAFFIC_CHANGE = -0.64
PUBLISHED_PERF_PER_WATT_CHANGE = 0.55


def baselines(rows):
    """The policies other than ``ideal`` and ``tm`` present in ``rows``, in registry order."""
    present = {row["policy"] for row in rows}
    return [p for p in POLICIES if p not in ("ideal", "tm") and p in present]


def _point(row):
    return row.get("workload", row.get("model")), row.get("hbm_fraction")


def _percent(value):
    return f"{value * 100:+.0f} %"


def tm_against(rows):
    """Markdown: one table of ``tm``'s traffic and throughput-per-watt change over each
    policy at each point of ``rows`` (metrics dicts as :func:`host.tier.run.sweep` or
    :func:`host.tier.run.run_tier` give them; a point a policy cannot run shows its
    failure), then one line per policy with the ranges and medians."""
    by = {(*_point(r), r["policy"]): r for r in rows}
    points = list(dict.fromkeys(_point(r) for r in rows))
    others = baselines(rows)
    out = ["| workload | HBM | " + " | ".join(f"vs `{p}`" for p in others) + " |\n",
           "|---|---|" + "---|" * len(others) + "\n"]
    changes = {p: ([], []) for p in others}
    for workload, fraction in points:
        tm = by.get((workload, fraction, "tm"))
        cells = []
        for policy in others:
            other = by.get((workload, fraction, policy))
            if tm is None or other is None or "infeasible" in tm:
                cells.append("—")
                continue
            if "infeasible" in other or "fails" in other:
                cells.append(f"`{policy}` fails")
                continue
            traffic = (tm["inter_tier_bytes"] / other["inter_tier_bytes"] - 1
                       if other["inter_tier_bytes"] else None)
            perf = tm["throughput_per_watt"] / other["throughput_per_watt"] - 1
            if traffic is not None:
                changes[policy][0].append(traffic)
            changes[policy][1].append(perf)
            cells.append(f"{'—' if traffic is None else _percent(traffic)} / {_percent(perf)}")
        hbm = "G10's" if fraction is None else f"{fraction * 100:g} %"
        out.append(f"| {workload} | {hbm} | " + " | ".join(cells) + " |\n")
    out += ["\n", "Each cell: inter-tier traffic / throughput per watt of `tm`, change over "
                  "the policy. Over all points:\n\n",
            "| against | traffic change (median; range) | throughput per watt change "
            "(median; range) |\n", "|---|---|---|\n"]
    for policy in others:
        traffic, perf = changes[policy]
        out.append(f"| `{policy}` | {_summary(traffic)} | {_summary(perf)} |\n")
    out.append(f"| TM-Training, published | {_percent(PUBLISHED_TRAFFIC_CHANGE)} | "
               f"{_percent(PUBLISHED_PERF_PER_WATT_CHANGE)} |\n")
    return "".join(out)


def _summary(values):
    if not values:
        return "—"
    return (f"{_percent(median(values))} ({_percent(min(values))} … "
            f"{_percent(max(values))})")
