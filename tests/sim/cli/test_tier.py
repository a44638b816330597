import json
import pathlib

import pytest

from matndp.host.tier.run import run_model
from matndp.host.units import format_bytes, format_seconds
from matndp.sim.cli import main

from .commands import exit_code


RUN = ["tier", "run", "--model", "resnet50", "--batch", "2", "--hbm-fraction", "0.25"]


def test_run_prints_the_metrics_as_json(capsys):
    assert main(RUN + ["--policy", "tm", "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    for key in ("inter_tier_bytes", "flash_read_bytes", "flash_write_bytes", "stall_s",
                "iteration_s", "energy_j", "throughput_per_watt", "hbm_peak_bytes"):
        assert key in metrics
    assert metrics["policy"] == "tm" and metrics["model"] == "resnet50"
    assert metrics["hbm_peak_bytes"] <= metrics["hbm_capacity_bytes"]


def test_run_takes_an_absolute_hbm_size(capsys):
    argv = ["tier", "run", "--model", "resnet50", "--batch", "2", "--hbm-gb", "0.2", "--json"]
    assert main(argv) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["hbm_capacity_bytes"] == 0.2e9 // 4096 * 4096
    assert exit_code(argv[:-3] + ["--hbm-gb", "0", "--json"]) == 2
    assert "HBM size must be > 0 GB" in capsys.readouterr().err


def test_run_writes_a_plot(tmp_path, capsys):
    path = tmp_path / "tier.png"
    assert main(RUN + ["--policy", "lru", "--plot", str(path)]) == 0
    assert path.stat().st_size > 10_000
    captured = capsys.readouterr()
    assert "traffic between HBM and flash" in captured.out
    assert captured.err == f"wrote {path}\n"


def test_run_says_what_ran_and_labels_every_number_with_its_unit(capsys):
    assert main(RUN + ["--policy", "g10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    metrics = run_model("resnet50", policy="g10", batch=2, hbm_fraction=0.25).metrics
    assert lines[0] == (f"tier run: zoo model resnet50, batch 2, on A100; HBM "
                        f"{format_bytes(metrics['hbm_capacity_bytes'])} (0.25 of the footprint), "
                        f"flash zssd, link 31.5 GB/s; policy g10; per iteration, the last of 3")
    shown = {line[:46].strip(): line[46:].strip() for line in lines[1:]}
    assert shown["traffic between HBM and flash"] == format_bytes(metrics["inter_tier_bytes"])
    assert shown["iteration time"] == format_seconds(metrics["iteration_s"])
    assert shown["of it, the GPU stalled waiting for transfers"] == format_seconds(metrics["stall_s"])
    assert shown["HBM in use at its peak"].endswith(" GB") or shown["HBM in use at its peak"].endswith(" MB")
    assert shown["memory cost"].startswith("$")
    assert not any("_" in label for label in shown), "raw key names in the text"


G10_FIXTURE = pathlib.Path(__file__).parents[2] / "host" / "workload" / "fixtures" / "g10"


def test_a_trace_under_a_setup_is_plotted_like_a_zoo_run(tmp_path, capsys, monkeypatch):
    import matndp.host.tier.plot as plot
    drawn = {}
    original = plot.plot_run

    def recording(run, by_policy, path):
        drawn.update(policy=run.policy, policies=sorted(by_policy), model=run.metrics["model"])
        return original(run, by_policy, path)
    monkeypatch.setattr(plot, "plot_run", recording)
    path = tmp_path / "trace.png"
    assert main(["tier", "run", "--trace", f"g10:{G10_FIXTURE}", "--preset", "g10", "--policy", "lru",
                 "--plot", str(path)]) == 0
    assert path.stat().st_size > 10_000
    from matndp.host.tier.policies import TIER_POLICIES
    assert (drawn["policy"], drawn["model"]) == ("lru", "g10")
    assert {"ideal", "lru", "g10", "tm"} <= set(drawn["policies"]) <= set(TIER_POLICIES)
    captured = capsys.readouterr()
    assert captured.out.startswith("tier run: workload g10, batch 4, on A100;")
    assert captured.err == f"wrote {path}\n"


def test_sweep_prints_a_table_and_writes_json_and_plot(tmp_path, capsys):
    rows_path, plot_path = tmp_path / "rows.json", tmp_path / "sweep.png"
    assert main(["tier", "sweep", "--models", "resnet50", "--batch", "2", "--fractions",
                 "0.02,0.5", "--policies", "ideal,tm", "--no-progress", "--output", str(rows_path),
                 "--plot", str(plot_path)]) == 0
    out = capsys.readouterr().out
    assert "infeasible" in out          # 2 % is below the largest op's working set
    rows = json.loads(rows_path.read_text())
    assert [(r["hbm_fraction"], r["policy"]) for r in rows] == [
        (0.02, "ideal"), (0.02, "tm"), (0.5, "ideal"), (0.5, "tm")]
    assert plot_path.stat().st_size > 10_000


@pytest.mark.parametrize("extra, message", [
    (["--hbm-fraction", "0"], "HBM fraction must be > 0"),
    (["--hbm-fraction", "-0.5"], "HBM fraction must be > 0"),
    (["--hbm-fraction", "half"], "must be a number"),
    (["--hbm-fraction", "0.001"], "below the largest single op's working set"),
    (["--policy", "fifo"], "unknown policy 'fifo'"),
    (["--flash", "qlc"], "unknown flash preset 'qlc'"),
    (["--gpu", "k80"], "unknown GPU preset 'k80'"),
    (["--model", "alexnet"], "unknown model 'alexnet'"),
    (["--flash-devices", "0"], "argument --flash-devices: must be an integer >= 1, got '0'"),
    (["--batch", "0"], "argument --batch: must be an integer >= 1, got '0'"),
    (["--link-gbs", "0"], "argument --link-gbs: must be > 0, got 0.0"),
])
def test_bad_configuration_exits_2_with_a_clear_message(extra, message, capsys):
    argv = ["tier", "run", "--model", "resnet50", "--batch", "2", "--hbm-fraction", "0.25"]
    for flag, value in zip(extra[::2], extra[1::2]):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    assert exit_code(argv) == 2
    assert message in capsys.readouterr().err


def test_sweep_refuses_an_unknown_policy(capsys):
    assert exit_code(["tier", "sweep", "--policies", "tm,belady", "--no-progress"]) == 2
    assert "unknown policy 'belady'" in capsys.readouterr().err
