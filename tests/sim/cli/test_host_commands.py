"""``matndp model`` and ``matndp gpu`` through the CLI entry point."""

import json
import pathlib
import subprocess
import sys

import pytest

from matndp.host.report import RunConfig, run_gpu
from matndp.sim.cli import main

from tests.paths import REPOSITORY as ROOT

from .commands import exit_code

PARAMETERS = {"resnet50": 25_557_032, "vgg16_bn": 138_365_992, "bert-base": 109_482_240,
              "gpt2": 124_439_808}
RUN_KEYS = {"baseline_s", "matndp_s", "speedup", "offloaded_share", "breakdown",
            "dram_bytes_baseline", "dram_bytes_matndp", "energy_j_baseline", "energy_j_matndp"}


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", list(PARAMETERS))
def test_model_summary_json(capsys, name):
    summary = _json(capsys, ["model", "summary", name, "--batch", "2", "--json"])
    assert {"parameters", "flops_per_iteration", "weight_bytes", "activation_bytes",
            "ops_by_kind"} <= set(summary)
    assert summary["parameters"] == PARAMETERS[name]
    assert summary["batch"] == 2 and summary["weight_bytes"] == 4 * PARAMETERS[name]


def test_model_summary_text_and_list(capsys):
    assert main(["model", "summary", "gpt2", "--seq-len", "128", "--dtype", "bf16"]) == 0
    out = capsys.readouterr().out
    assert "124,439,808" in out and "sequence length 128" in out
    assert main(["model", "list"]) == 0
    assert capsys.readouterr().out.split() == list(PARAMETERS)


def test_gpu_run_json_and_plot(capsys, tmp_path):
    plot = tmp_path / "run.png"
    report = _json(capsys, ["gpu", "run", "--model", "bert-base", "--gpu", "a100", "--batch",
                            "8", "--dtype", "bf16", "--seq-len", "64", "--json",
                            "--plot", str(plot)])
    assert RUN_KEYS <= set(report)
    # the command runs the library with what it was given
    assert report.pop("plot") == str(plot)
    assert report == json.loads(json.dumps(run_gpu(RunConfig("bert-base", "a100", 8, "bf16", 1, 64))))
    assert (report["batch"], report["dtype"], report["seq_len"], report["gpus"]) == (8, "bf16", 64, 1)
    assert report["speedup"] <= 1 / (1 - report["offloaded_share"]) * (1 + 1e-9)
    for row in report["breakdown"].values():
        assert {"baseline_s", "matndp_gpu_s", "matndp_ndp_s"} <= set(row)
    assert sum(r["baseline_s"] for r in report["breakdown"].values()) == \
        pytest.approx(report["baseline_s"])
    assert report["calibration"]["source"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gpu_run_in_the_expander_placement(capsys):
    argv = ["gpu", "run", "--model", "vgg16_bn", "--gpu", "v100", "--batch", "4", "--dtype",
            "fp16", "--placement", "expander"]
    report = _json(capsys, argv + ["--json"])
    assert report == json.loads(json.dumps(run_gpu(RunConfig("vgg16_bn", "v100", 4, "fp16",
                                                             placement="expander"))))
    assert report["memory_placement"]["name"] == "expander"
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "tensors and NDP in a memory expander: link 64 GB/s per direction at 80%, " \
           "expander DRAM 307.2 GB/s over 8 controllers" in out
    assert f"speedup {report['speedup']:.3f}x" in out


def test_gpu_run_takes_a_workload_of_your_own_and_plots_it(capsys, tmp_path):
    workload, plot = tmp_path / "mine.json", tmp_path / "mine.png"
    assert main(["tier", "export", "--model", "resnet50", "--batch", "4", "--output", str(workload)]) == 0
    capsys.readouterr()
    from_zoo = _json(capsys, ["gpu", "run", "--model", "resnet50", "--gpu", "a100", "--batch", "4", "--json"])
    from_file = _json(capsys, ["gpu", "run", "--trace", f"workload:{workload}", "--gpu", "a100",
                               "--json", "--plot", str(plot)])
    assert from_file.pop("plot") == str(plot) and plot.read_bytes()[:4] == b"\x89PNG"
    for key in ("baseline_s", "matndp_s", "dram_bytes_baseline", "dram_bytes_matndp", "breakdown"):
        assert from_file[key] == from_zoo[key], key
    assert (from_file["model"], from_file["batch"]) == ("resnet50", 4)


def test_gpu_run_text_names_what_ran_and_explains_longer_kernels(capsys):
    assert main(["gpu", "run", "--model", "resnet50", "--gpu", "a100", "--batch", "64", "--dtype", "bf16"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "gpu run: resnet50 batch 64 bf16 on 1 x A100, offload policy auto (NDP calibration: defaults)"
    header = next(line for line in out if line.strip().startswith("kind"))
    assert header.split()[1:] == ["baseline", "ms", "matNDP", "GPU", "ms", "NDP", "ms", "offloaded", "ops"]
    report = run_gpu(RunConfig("resnet50", "a100", 64, "bf16"))
    longer = [kind for kind, row in report["breakdown"].items() if row["matndp_gpu_s"] > row["baseline_s"]]
    assert "conv" in longer and "normalization" in longer
    for kind in longer:
        assert "*" in next(line for line in out if line.split()[0] == kind)
    note = next(line for line in out if line.strip().startswith("* longer in matNDP"))
    assert f"({', '.join(longer)})" in note and "NDP kernels riding on these ops' writes" in note


def test_gpu_run_text_with_several_gpus(capsys):
    assert main(["gpu", "run", "--model", "resnet50", "--gpu", "v100", "--batch", "8",
                 "--gpus", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 x V100" in out and "speedup" in out


@pytest.mark.parametrize("argv, message", [
    (["gpu", "run", "--model", "alexnet", "--gpu", "v100", "--batch", "8"], "unknown model 'alexnet'"),
    (["gpu", "run", "--model", "gpt2", "--gpu", "t4", "--batch", "8"], "unknown GPU preset 't4'"),
    (["gpu", "run", "--model", "gpt2", "--gpu", "v100", "--batch", "0"], "--batch"),
    (["gpu", "run", "--model", "gpt2", "--gpu", "v100", "--batch", "1", "--gpus", "0"], "--gpus"),
    (["gpu", "run", "--model", "gpt2", "--gpu", "v100", "--batch", "256"], "needs at least"),
    (["gpu", "run", "--model", "gpt2", "--gpu", "v100", "--batch", "1", "--dtype", "fp8"], "fp8"),
    (["gpu", "run", "--model", "gpt2", "--gpu", "v100"], "give --batch for a zoo model"),
    (["gpu", "run", "--gpu", "v100", "--batch", "8"], "one of the arguments --model --trace is required"),
    (["gpu", "run", "--trace", "workload:missing.json", "--gpu", "v100", "--batch", "8"],
     "--batch sizes a zoo model"),
    (["gpu", "run", "--trace", "torch:missing.json", "--gpu", "v100"], "missing.json"),
    (["model", "summary", "bert-large"], "unknown model 'bert-large'"),
    (["model", "summary", "bert-base", "--seq-len", "1024"], "seq_len"),
])
def test_bad_input_exits_2_with_a_clear_message(capsys, argv, message):
    assert exit_code(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["model", "--help"], ["model", "summary", "--help"],
                                  ["gpu", "--help"], ["gpu", "run", "--help"],
                                  ["gpu", "validate", "--help"], ["gpu", "presets", "--help"]])
def test_every_command_has_help(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_installed_command_exit_codes():
    matndp = ROOT / ".venv" / "bin" / "matndp"
    if not matndp.exists():
        matndp = pathlib.Path(sys.executable).parent / "matndp"
    ok = subprocess.run([str(matndp), "gpu", "run", "--model", "resnet50", "--gpu", "h100",
                         "--batch", "4", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["gpu"] == "h100"
    bad = subprocess.run([str(matndp), "gpu", "run", "--model", "resnet50", "--gpu", "x",
                          "--batch", "4"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "unknown GPU preset 'x'" in bad.stderr
