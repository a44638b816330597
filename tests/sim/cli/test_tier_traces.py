"""``matndp tier run`` on traces and setups, ``tier export``, ``tier validate-g10``."""

import json
from pathlib import Path

import pytest

from matndp.sim.cli import main

from .commands import exit_code


G10_FIXTURE = Path(__file__).parents[2] / "host" / "workload" / "fixtures" / "g10"


def _json(capsys):
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("policy", ["ideal", "lru", "g10", "tm"])
def test_a_g10_trace_runs_under_the_g10_preset(policy, capsys):
    argv = ["tier", "run", "--trace", f"g10:{G10_FIXTURE}", "--preset", "g10", "--policy",
            policy, "--json"]
    assert main(argv) == 0
    metrics = _json(capsys)
    assert metrics["ideal_iteration_s"] == pytest.approx(3.9375e-3, rel=1e-15)
    assert metrics["iteration_s"] == pytest.approx(3.9375e-3, rel=1e-15)   # 40 GB is plenty
    assert metrics["inter_tier_bytes"] == 0 and metrics["policy"] == policy
    config = metrics["config"]
    assert config["preset"] == "g10" and config["run"]["policy"] == policy
    assert config["tier"]["host_bytes"] == 128 * 2**30 and config["flash"]["name"] == "g10-ssd"


def test_options_and_overrides_reach_the_setup(tmp_path, capsys):
    path = tmp_path / "setup.toml"
    path.write_text('[tier]\nhost_bytes = 12288\n[run]\npolicy = "lru"\n')
    argv = ["tier", "run", "--trace", f"g10:{G10_FIXTURE}", "--config", str(path),
            "--hbm-gb", "0.00004", "--set", "tier.fault_batch_pages=1", "--json"]
    assert main(argv) == 0
    metrics = _json(capsys)
    tier = metrics["config"]["tier"]
    assert (tier["hbm_bytes"], tier["host_bytes"], tier["fault_batch_pages"]) == (40000, 12288, 1)
    assert metrics["policy"] == "lru" and metrics["faults"] > 0
    assert metrics["fault_batches"] == metrics["faults"]            # one page per batch
    assert main(argv[:-3] + ["--json"]) == 0            # G10's 50-page batches
    default = _json(capsys)
    assert default["faults"] == metrics["faults"]
    assert default["fault_batches"] < metrics["fault_batches"]


def test_export_then_run_gives_the_zoo_result(tmp_path, capsys):
    path = tmp_path / "resnet50.json"
    assert main(["tier", "export", "--model", "resnet50", "--batch", "2", "--output", str(path)]) == 0
    capsys.readouterr()
    common = ["--hbm-fraction", "0.25", "--policy", "g10", "--json"]
    assert main(["tier", "run", "--model", "resnet50", "--batch", "2", "--preset", "default"]
                + common) == 0
    from_model = _json(capsys)
    assert main(["tier", "run", "--trace", f"workload:{path}"] + common) == 0
    from_file = _json(capsys)
    for key in ("iteration_s", "inter_tier_bytes", "stall_s", "energy_j"):
        assert from_file[key] == from_model[key]


def test_a_zoo_run_echoes_its_configuration(capsys):
    assert main(["tier", "run", "--model", "resnet50", "--batch", "2", "--hbm-fraction", "0.25",
                 "--json"]) == 0
    config = _json(capsys)["config"]
    assert config["tier"]["hbm_fraction"] == 0.25 and config["flash"]["name"] == "zssd"
    assert config["run"]["policy"] == "tm"


@pytest.mark.parametrize("argv, message", [
    (["--trace", "g10:/nonexistent/dir", "--preset", "g10"], "no such G10 trace directory"),
    (["--trace", "g11:/tmp", "--preset", "g10"], "unknown trace format 'g11'"),
    (["--trace", f"g10:{G10_FIXTURE}", "--set", "tier.size=3"], "unknown key tier.size"),
    (["--trace", f"g10:{G10_FIXTURE}", "--config", "/nonexistent.toml"], "cannot read"),
    (["--trace", f"g10:{G10_FIXTURE}", "--preset", "g20"], "unknown tier preset 'g20'"),
    (["--model", "resnet50"], "give --hbm-fraction or --hbm-gb"),
    ([], "give --model or --trace"),
])
def test_bad_input_exits_2_with_a_clear_message(argv, message, capsys):
    assert exit_code(["tier", "run"] + argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_validate_g10_says_when_the_checkout_is_missing(tmp_path, capsys):
    assert exit_code(["tier", "validate-g10", str(tmp_path / "G10")]) == 2
    assert "G10 checkout not found" in capsys.readouterr().err
    (tmp_path / "G10" / "example_results" / "overall_performance").mkdir(parents=True)
    (tmp_path / "G10" / "example_results" / "overall_performance" / "all.base.txt").write_text(
        "lru | prefetch_lru | ideal\n\nBERT|B = 256|M = 370.10%\n3 2 1\n")
    assert exit_code(["tier", "validate-g10", str(tmp_path / "G10"), "--no-progress"]) == 2
    assert "no kernels.config for BERT_Base at batch 256" in capsys.readouterr().err
