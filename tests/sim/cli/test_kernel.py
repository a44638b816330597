"""``matndp kernel``: assemble, disassemble, list, run (the RTL run saying what it does and
explaining its figures), and bad input as exit code 2."""

import pytest

from matndp.host.kernels.image import load_image
from matndp.sim.cli import main


SOURCE = ".kernel relu\n.arg OUT 0\n.main\n    vmax v1, DATA, 0.0\n    vst.x [OFFSET + OUT], v1\n"


def test_asm_then_disasm(tmp_path, capsys):
    source = tmp_path / "relu.s"
    source.write_text(SOURCE)
    assert main(["kernel", "asm", str(source)]) == 0
    assert "kernel relu, 2 instructions" in capsys.readouterr().err
    image = load_image(tmp_path / "relu.ndpk")
    assert main(["kernel", "disasm", str(tmp_path / "relu.ndpk")]) == 0
    text = capsys.readouterr().out
    assert ".kernel relu" in text and "vmax" in text
    again = tmp_path / "again.s"
    again.write_text(text)
    assert main(["kernel", "asm", str(again), "--output", str(tmp_path / "out" / "again.ndpk")]) == 0
    assert load_image(tmp_path / "out" / "again.ndpk").words == image.words


def test_asm_includes_from_the_source_folder_then_the_include_folders(tmp_path, capsys):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "relu.inc").write_text(".macro relu y, x\n    vmax \\y, \\x, 0.0\n.endm\n")
    source = tmp_path / "relu.s"
    source.write_text('.kernel relu\n.include "relu.inc"\n.arg OUT 0\n.main\n    relu v1, DATA\n'
                      '    vst.x [OFFSET + OUT], v1\n')
    assert main(["kernel", "asm", str(source)]) == 2
    assert "relu.s:2:10: cannot include 'relu.inc'" in capsys.readouterr().err
    assert main(["kernel", "asm", str(source), "-I", str(shared)]) == 0
    plain = tmp_path / "plain.s"
    plain.write_text(SOURCE)
    assert main(["kernel", "asm", str(plain)]) == 0
    assert load_image(tmp_path / "relu.ndpk").words == load_image(tmp_path / "plain.ndpk").words


@pytest.mark.parametrize("command, content, message", [
    ("asm", ".kernel k\n.main\n    vaddd v1\n", "k.s:3:5: unknown mnemonic 'vaddd'"),
    ("asm", None, "no such file"),
    ("disasm", "{", "not JSON"),
    ("disasm", None, "no such file"),
    ("asm", ".kernel k\n.main\n" + "    nop\n" * 4 + "    exit\n", "kernel too large"),
])
def test_bad_input_is_exit_code_2_with_a_message(tmp_path, capsys, command, content, message):
    path = tmp_path / ("k.s" if command == "asm" else "k.ndpk")
    if content is not None:
        path.write_text(content)
    arguments = ["kernel", command, str(path)]
    if "too large" in message:
        arguments += ["--instruction-words", "4"]
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error


def test_doc_prints_the_isa_page(capsys):
    assert main(["kernel", "doc"]) == 0
    assert capsys.readouterr().out.startswith("# The NDP kernel instruction set")


def test_list_prints_every_library_kernel_with_its_trigger_and_count(capsys):
    from matndp.host.kernels.library import KERNELS
    assert main(["kernel", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(KERNELS)
    relu = lines[list(KERNELS).index("relu_fwd")].split()
    assert relu[1:4] == ["write", "x", str(KERNELS["relu_fwd"].instructions_per_sector)]
    assert "read x" in lines[list(KERNELS).index("bn_apply")]


def test_list_ops_and_markdown(capsys):
    assert main(["kernel", "list", "--ops"]) == 0
    assert "softmax_fwd" in capsys.readouterr().out
    assert main(["kernel", "list", "--markdown"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("\n### Kernels\n") and "| `relu_fwd` |" in text


def test_run_on_the_iss_dumps_tensors_with_pytorch_names(tmp_path, capsys):
    import json
    import numpy as np
    assert main(["kernel", "run", "adam", "--elements", "40", "--seed", "4", "--sim", "iss",
                 "--dump", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["kernel"], report["elements"], report["mismatches"]) == ("adam", 40, {})
    assert sorted(p.name for p in (tmp_path / "inputs").iterdir()) == \
        ["exp_avg.npy", "exp_avg_sq.npy", "grad.npy", "param.npy"]
    assert sorted(p.name for p in (tmp_path / "outputs").iterdir()) == \
        ["exp_avg.npy", "exp_avg_sq.npy", "param.npy"]
    params = json.loads((tmp_path / "params.json").read_text())
    assert {"lr", "beta1", "beta2", "eps", "weight_decay", "step"} <= set(params)
    # The dumped update is Adam's, recomputed here in float64 and rounded: within 1 ulp.
    grad, param, m, v = (np.load(tmp_path / "inputs" / f"{n}.npy").astype(np.float64)
                         for n in ("grad", "param", "exp_avg", "exp_avg_sq"))
    b1, b2, step = params["beta1"], params["beta2"], params["step"]
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad * grad
    denom = np.sqrt(v) / np.sqrt(1 - b2 ** step) + params["eps"]
    expected = (param - params["lr"] / (1 - b1 ** step) * m / denom).astype(np.float32)
    got = np.load(tmp_path / "outputs" / "param.npy")
    ulps = np.abs(got.view(np.int32).astype(np.int64) - expected.view(np.int32).astype(np.int64))
    assert ulps.max() <= 1


def test_run_text_summary_says_what_was_checked(capsys):
    assert main(["kernel", "run", "bn_apply", "--rows", "3", "--sim", "iss"]) == 0
    out = capsys.readouterr().out
    assert "bn_apply (rows 3, channels 16) on iss" in out and "bit-exact" in out
    assert out.rstrip().endswith("PASS")


@pytest.mark.parametrize("arguments, message", [
    (["nope"], "no library kernel 'nope'"),
    (["bn_apply", "--elements", "65"], "must be a multiple of channels 16"),
    (["bn_apply", "--elements", "64", "--rows", "4"], "not both"),
    (["relu_fwd", "--rows", "4"], "sized by elements, not rows"),
    (["bn_apply", "--channels", "12"], "channels = 12 must be a multiple of 8"),
    (["relu_fwd", "--elements", "0"], "must be an integer in 1..16777216, got '0'"),
    (["relu_fwd", "--pressure", "1"], "must be a number in [0, 1), got '1'"),
    (["relu_fwd", "--seed", "-1"], "must be an integer >= 0"),
    (["relu_fwd", "--sim", "modelsim"], "invalid choice: 'modelsim'"),
    (["relu_fwd", "--waves"], "--waves needs --dump"),
    (["relu_fwd", "--config", "fast"], "argument --config: invalid choice: 'fast' (choose from "
                                       "'default', 'channel', 'fpga')"),
    (["relu_fwd", "--gpu-interval", "0"], "argument --gpu-interval: must be an integer in 1..65536"),
    (["relu_fwd", "--gpu-interval", "4", "--pressure", "0.2"],
     "--gpu-interval 4 sets the GPU's pace; it cannot be combined with --pressure 0.2"),
    (["relu_fwd", "--gpu-interval", "2", "--sim", "iss"], "the ISS has none"),
    (["bn_stats", "--rows", "4", "--channels", "1024", "--config", "fpga"],
     "B of scratchpad; the engine has 4096 B"),
])
def test_run_bad_input_is_exit_code_2(capsys, arguments, message):
    from tests.sim.cli.commands import exit_code
    assert exit_code(["kernel", "run", *arguments]) == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error
    # Refused before any work: nothing exported, built or run.
    assert "exporting" not in error and "log: " not in error


@pytest.mark.rtl
@pytest.mark.xdist_group("engine_slice")
def test_run_through_the_rtl_says_what_it_does_and_what_the_stall_cycles_are(capfd):
    assert main(["kernel", "run", "relu_fwd", "--elements", "64"]) == 0
    captured = capfd.readouterr()
    steps = captured.err.splitlines()
    assert steps[0].startswith("log: ") and "build/logs/kernel-run-" in steps[0]
    assert "kernel run: exporting the slice with its engine (the default configuration)" in steps
    assert "kernel run: relu_fwd (elements 64), 8 triggering accesses, through the slice under verilator" in steps
    assert any(line.startswith("  ndp_slice: ") for line in steps)
    stall = next(line for line in captured.out.splitlines() if "GPU stall cycles" in line)
    assert "the cycles the slice held the GPU's requests because the engine's event queue was full" in stall
    assert "a sector every 4 cycles on an A100" in stall


@pytest.mark.rtl
@pytest.mark.xdist_group("engine_slice")
def test_run_on_the_rtl_at_a_gpu_pace_reports_the_stalls_and_the_tail(capsys):
    import json
    assert main(["kernel", "run", "bn_stats", "--rows", "8", "--config", "default",
                 "--gpu-interval", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["config"], report["gpu_interval_cycles"], report["passed"]) == ("default", 4, True)
    assert 0 <= report["first_write_stall_cycles"] <= report["gpu_stall_cycles"]
    # The last of the 16 writes is taken at least 15 slots of 4 cycles after the first.
    assert 0 < report["tail_cycles"] <= report["cycles"] - 4 * 15
    assert main(["kernel", "run", "bn_stats", "--rows", "8", "--gpu-interval", "4"]) == 0
    out = capsys.readouterr().out
    assert "configuration default, one triggering access offered every 4 cycles from arming: " \
           f"{report['first_write_stall_cycles']} stall cycles before the first was taken, " \
           f"{report['tail_cycles']} cycles from the last to completion" in out
