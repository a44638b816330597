"""tm against every other policy: the per-point changes and the summary beside
TM-Training's published claims, on hand-made metric rows."""

from matndp.host.tier.comparison import baselines, tm_against


def row(policy, traffic, perf, model="m", fraction=0.25):
    return {"model": model, "hbm_fraction": fraction, "policy": policy,
            "inter_tier_bytes": traffic, "throughput_per_watt": perf}


def test_changes_are_tm_over_each_policy_with_ranges_and_medians():
    rows = [row("ideal", 0, 2.0), row("g10", 200, 1.0), row("lru", 100, 0.5), row("tm", 50, 1.5),
            row("g10", 100, 1.0, fraction=0.5), row("lru", 50, 1.0, fraction=0.5),
            row("tm", 50, 1.2, fraction=0.5)]
    assert baselines(rows) == ["lru", "g10"]             # registry order, no ideal or tm
    text = tm_against(rows)
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    assert lines[1] == "| m | 25 % | -50 % / +200 % | -75 % / +50 % |"
    assert lines[2] == "| m | 50 % | +0 % / +20 % | -50 % / +20 % |"
    assert lines[4] == "| `lru` | -25 % (-50 % … +0 %) | +110 % (+20 % … +200 %) |"
    assert lines[5] == "| `g10` | -62 % (-75 % … -50 %) | +35 % (+20 % … +50 %) |"
    assert lines[6] == "| TM-Training, published | -64 % | +55 % |"


def test_a_policy_that_cannot_run_a_point_is_shown_failing_and_left_out_of_the_summary():
    rows = [row("tm", 50, 1.0), row("g10", 100, 0.5),
            {"model": "m", "hbm_fraction": 0.25, "policy": "flashneuron", "infeasible": "no room"}]
    lines = [line for line in tm_against(rows).splitlines() if line.startswith("| ")]
    assert lines[1] == "| m | 25 % | -50 % / +100 % | `flashneuron` fails |"
    assert "| `flashneuron` | — | — |" in lines


def test_the_tables_are_framed_and_mark_what_cannot_be_compared():
    """A workload of its own (no HBM fraction: G10's setup); a policy that moved nothing
    (no traffic change to give); a point where tm itself cannot run."""
    rows = [{**row("tm", 50, 1.0, model=None, fraction=None), "workload": "bert"},
            {**row("lru", 0, 0.5, model=None, fraction=None), "workload": "bert"},
            {"model": "m", "hbm_fraction": 0.5, "policy": "tm", "infeasible": "no room"},
            row("lru", 10, 1.0, fraction=0.5)]
    assert tm_against(rows).splitlines() == [
        "| workload | HBM | vs `lru` |",
        "|---|---|---|",
        "| bert | G10's | — / +100 % |",
        "| m | 50 % | — |",
        "",
        "Each cell: inter-tier traffic / throughput per watt of `tm`, change over the policy. "
        "Over all points:",
        "",
        "| against | traffic change (median; range) | throughput per watt change (median; range) |",
        "|---|---|---|",
        "| `lru` | — | +100 % (+100 % … +100 %) |",
        "| TM-Training, published | -64 % | +55 % |"]
