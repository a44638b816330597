"""Every command of the ``matndp`` command line refuses bad input the same way: exit code
2, one line on standard error naming the option or the file and the problem (no usage, no
traceback), and nothing written. The table must name every command: a new command gets its
rows here."""

import argparse

import pytest

from matndp.hw.config import SLICE_VARIABLE
from matndp.sim.cli import build_parser, parsers

from .commands import exit_code


UNWRITABLE = "/sys/matndp-out"          # a folder no one may create files in, root included
MISSING = "no-such-file.json"

# (command words, extra arguments, part of the message)
TABLE = [
    (["doctor"], ["--fast"], "unrecognized arguments: --fast"),
    (["csr", "doc"], ["--output", f"{UNWRITABLE}/csr.md"], "cannot create /sys/matndp-out/csr.md"),
    (["docs"], ["--root", "no-such-dir"], "no-such-dir: no docs/ folder"),
    (["kernel", "asm"], [MISSING], f"{MISSING}: no such file"),
    (["kernel", "asm"], [MISSING, "--instruction-words=0"], "argument --instruction-words: must be an integer >= 1"),
    (["kernel", "asm"], [MISSING, "--output", f"{UNWRITABLE}/k.ndpk"], "argument --output: cannot create"),
    (["kernel", "disasm"], [MISSING], f"{MISSING}: no such file"),
    (["kernel", "doc"], ["--output", UNWRITABLE], "argument --output: cannot create"),
    (["kernel", "list"], ["relu_fwd"], "unrecognized arguments: relu_fwd"),
    (["kernel", "run"], ["nope"], "no library kernel 'nope'"),
    (["kernel", "run"], ["relu_fwd", "--pressure", "1"], "argument --pressure: must be a number in [0, 1)"),
    (["kernel", "run"], ["relu_fwd", "--dump", f"{UNWRITABLE}/d"], f"{UNWRITABLE}/d: cannot create"),
    (["tier", "export"], ["--model", "resnet50", "--output", f"{UNWRITABLE}/w.json"], f"{UNWRITABLE}: Operation not permitted"),
    (["tier", "validate-g10"], ["no-such-dir"], "G10 checkout not found at no-such-dir"),
    (["sweep"], [MISSING.replace(".json", ".toml")], "no-such-file.toml: no such sweep specification"),
    (["soak"], ["--cycles", "0"], "argument --cycles: must be an integer in 1..1099511627776, got '0'"),
    (["model", "list"], ["resnet50"], "unrecognized arguments: resnet50"),
    (["model", "summary"], ["resnet50", "--batch", "2.5"], "argument --batch: must be an integer >= 1, got '2.5'"),
    (["model", "summary"], ["resnet50", "--output", UNWRITABLE], "argument --output: cannot create"),
    (["gpu", "presets"], ["--gpu", "a100"], "unrecognized arguments: --gpu a100"),
    (["gpu", "run"], ["--model", "resnet50", "--gpu", "a100", "--batch", "2.5"],
     "argument --batch: must be an integer >= 1, got '2.5'"),
    (["gpu", "run"], ["--model", "resnet50", "--gpu", "a100", "--batch", "2", "--plot", "run.txt"],
     "argument --plot: run.txt: a figure is written as .png, .pdf, .svg; not .txt"),
    (["gpu", "run"], ["--model", "resnet50", "--gpu", "a100", "--batch", "2", "--plot", f"{UNWRITABLE}/run"],
     "argument --plot: cannot create /sys/matndp-out/run.png"),
    (["gpu", "run"], ["--model", "resnet50", "--gpu", "a100", "--batch", "2", "--calibration", MISSING],
     f"calibration file {MISSING} does not exist"),
    (["gpu", "run"], ["--model", "resnet50", "--gpu", "a100", "--batch", "2", "--placement", "far"],
     "argument --placement: unknown memory placement 'far'; known: local, expander"),
    (["gpu", "run"], ["--model", "resnet50", "--gpu", "a100", "--batch", "2", "--placement", "expander",
                      "--gpus", "2"], "placement 'expander' is for one GPU; with 2 GPUs the run is NDPXNet"),
    (["gpu", "validate"], ["--output", UNWRITABLE], "argument --output: cannot create"),
    (["gpu", "validate"], ["--calibration", MISSING], f"calibration file {MISSING} does not exist"),
    (["tier", "run"], ["--model", "resnet50", "--hbm-gb=-1"], "argument --hbm-gb: HBM size must be > 0 GB"),
    (["tier", "run"], ["--model", "resnet50", "--hbm-fraction", "0.25", "--plot", f"{UNWRITABLE}/t.png"],
     "argument --plot: cannot create"),
    (["tier", "run"], ["--model", "resnet50", "--hbm-fraction", "0.25", "--output", UNWRITABLE],
     "argument --output: cannot create"),
    (["tier", "sweep"], ["--output", UNWRITABLE], "argument --output: cannot create"),
    (["tier", "sweep"], ["--fractions", "0.5,x"], "argument --fractions: HBM fraction must be a number, got 'x'"),
    (["export"], ["--output", f"{UNWRITABLE}/ndp_slice.v"], "argument --output: cannot create"),
    (["export"], ["--config", "huge"], "argument --config: invalid choice: 'huge'"),
    (["export"], ["--design", "expander-axi", "--config", "fpga"],
     "--config applies to --design axi or axi-pipelined, not expander-axi"),
    (["soc-sim"], ["--build", UNWRITABLE], "argument --build: cannot create"),
    (["soc"], ["--build", UNWRITABLE], "argument --build: cannot create"),
    (["soc"], ["--seed", "-1"], "argument --seed: must be an integer in 0..2147483647, got '-1'"),
    (["lint"], ["missing.v"], "no Verilog at missing.v"),
    (["bench"], ["--output", UNWRITABLE], "argument --output: cannot create"),
    (["bench"], ["--only", "warp_drive"], "unknown benchmark(s) warp_drive"),
    (["sim"], ["--tiles=-3"], "argument --tiles: must be an integer in 1..100, got '-3'"),
    (["sim"], ["--tiles", "0"], "argument --tiles: must be an integer in 1..100, got '0'"),
    (["sim"], ["--tiles", "100000000"], "argument --tiles: must be an integer in 1..100, got '100000000'"),
    (["sim"], ["--tiles", "2.5"], "argument --tiles: must be an integer in 1..100, got '2.5'"),
    (["sim"], ["--seed=-1"], "argument --seed: must be an integer in 0..4294967295, got '-1'"),
    (["sim"], ["--seed", "4294967296"], "argument --seed: must be an integer in 0..4294967295"),
    (["sim"], ["--output", UNWRITABLE], "argument --output: cannot create /sys/matndp-out"),
    (["sim"], ["--simulator", "modelsim"], "argument --simulator: invalid choice: 'modelsim'"),
    (["sim"], ["--model", "alexnet"], "unknown model 'alexnet'"),
    (["sim"], ["--policy", "fifo"], "unknown policy 'fifo'"),
    (["sim"], ["--ndpxnet", "1"], "argument --ndpxnet: must be an integer in 2..8, got '1'"),
    (["sim"], ["--ndpxnet", "9"], "argument --ndpxnet: must be an integer in 2..8, got '9'"),
    (["sim"], ["--ndpxnet", "4", "--bucket-sectors", "0"],
     "argument --bucket-sectors: must be a positive integer or all, not '0'"),
    (["sim"], ["--ndpxnet", "4", "--bucket-sectors", "some"],
     "argument --bucket-sectors: must be a positive integer or all, not 'some'"),
    (["sim"], ["--batch", "0"], "argument --batch: must be an integer >= 1, got '0'"),
    (["sim"], ["--hbm-fraction", "0"], "argument --hbm-fraction"),
    (["sim"], ["--window", "3:1"], "argument --window: must be FIRST:END with 0 <= FIRST < END"),
    (["sim"], ["--window", "1"], "argument --window: must be FIRST:END"),
    (["sim"], ["--block", "layer9"], "no op of resnet50 starts with 'layer9'"),
    (["sim"], ["--batch", "256"], "needs more than 2,097,152 sectors of memory"),
    (["sim"], ["--window", "0:999"], "--window 0:999: the co-simulation has"),
    (["sim"], ["--full-iteration", "--workers", "0"], "argument --workers: must be an integer >= 1, got '0'"),
    (["sim"], ["--full-iteration", "--ray", "nohost"],
     "argument --ray: must be HOST:PORT, auto or local, not 'nohost'"),
    (["sim"], ["--full-iteration", "--ray", "127.0.0.1:1"], "--ray 127.0.0.1:1: no Ray cluster at 127.0.0.1:1"),
    (["sim"], ["--workers", "2"], "--workers and --ray run the jobs of --full-iteration or --slices; add one"),
    (["sim"], ["--slices", "0"], "argument --slices: must be a positive integer or all, not '0'"),
    (["sim"], ["--slices=-2"], "argument --slices: must be a positive integer or all, not '-2'"),
    (["sim"], ["--slices", "2.5"], "argument --slices: must be a positive integer or all, not '2.5'"),
    (["sim"], ["--slices", "some"], "argument --slices: must be a positive integer or all, not 'some'"),
    (["sim"], ["--slices", "161"], "--slices 161: the a100's memory is interleaved over 160 slices; give 1..160 or all"),
    (["sim"], ["--slices", "2", "--no-cosim"], "--slices 2: the co-simulation is off (--no-cosim, the default under Icarus)"),
    (["synth"], ["--freq", "0"], "argument --freq: target clock must be in (0, 1000] MHz, got 0.0"),
    (["synth"], ["--freq", "5000"], "argument --freq: target clock must be in (0, 1000] MHz, got 5000.0"),
    (["synth"], ["--seed=-1"], "argument --seed: must be an integer in 0..2147483647, got '-1'"),
    (["synth"], ["--route-timeout", "0"], "argument --route-timeout: route timeout must be > 0 s"),
    (["synth"], ["--output", UNWRITABLE], "argument --output: cannot create"),
    (["synth"], ["--only", "fp_warp"], "unknown design(s) fp_warp"),
    (["synth"], ["--placer", "quick"], "argument --placer: invalid choice: 'quick'"),
    (["synth"], ["--router", "router3"], "argument --router: invalid choice: 'router3'"),
]


def _leaf_commands():
    """The words of every command that runs something (has no sub-commands)."""
    commands = []
    for parser in parsers(build_parser()):
        if not any(isinstance(action, argparse._SubParsersAction) for action in parser._actions):
            commands.append(parser.prog.split()[1:])
    return commands


def test_the_table_names_every_command():
    named = {tuple(words) for words, _, _ in TABLE}
    assert [words for words in _leaf_commands() if tuple(words) not in named] == []


@pytest.mark.parametrize("words, extra, message", TABLE,
                         ids=[" ".join(words + extra) for words, extra, _ in TABLE])
def test_bad_input_exits_2_with_one_clear_message(capsys, tmp_path, monkeypatch, words, extra, message):
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    assert exit_code(words + extra) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, f"more than the one line of the error:\n{err}"
    assert sorted(tmp_path.rglob("*")) == before, "bad input left files behind"


def test_an_output_under_a_file_is_refused(capsys, tmp_path):
    blocker = tmp_path / "report"
    blocker.write_text("")
    assert exit_code(["gpu", "validate", "--output", str(blocker / "tables.md")]) == 2
    assert f"cannot create {blocker / 'tables.md'}: {blocker} is a file" in capsys.readouterr().err
    assert exit_code(["sim", "--output", str(blocker)]) == 2
    assert f"{blocker} is a file, not a folder" in capsys.readouterr().err


def test_every_numeric_option_is_range_checked():
    """No option parses with a bare int or float: each has a range and a message."""
    loose = [(parser.prog, action.option_strings) for parser in parsers(build_parser())
             for action in parser._actions if action.type in (int, float)]
    assert loose == []


def test_a_capacity_beyond_any_device_is_taken_with_a_warning(capsys):
    args = build_parser().parse_args(["tier", "run", "--model", "resnet50", "--hbm-gb", "1e9"])
    assert args.hbm_gb == 1e9
    err = capsys.readouterr().err
    assert "warning: HBM size 1e+09 GB is more than any GPU carries (at most 288 GB)" in err


def test_unknown_calibration_kernels_are_reported_in_text_mode(capsys, tmp_path):
    calibration = tmp_path / "calibration.json"
    calibration.write_text('{"schema": "matndp.ndp_kernels/1", "kernels": '
                           '{"relu_fwd": {"cycles_per_packet": 10.4}, "frobnicate": {"cycles_per_packet": 3}}}')
    assert exit_code(["gpu", "run", "--model", "resnet50", "--gpu", "a100", "--batch", "2",
                      "--calibration", str(calibration)]) == 0
    captured = capsys.readouterr()
    assert f"calibration {calibration} names kernels the model does not know, ignored: frobnicate" \
        in captured.err
    assert "speedup" in captured.out


def test_a_calibration_from_another_slice_configuration_exits_2(capsys, tmp_path):
    import json
    calibration = tmp_path / "calibration.json"
    calibration.write_text(json.dumps({"schema": "matndp.ndp_kernels/1",
                                       "ndp_config": {"sector_bytes": 64},
                                       "kernels": {"relu_fwd": {"cycles_per_packet": 10.4}}}))
    assert exit_code(["gpu", "run", "--model", "resnet50", "--gpu", "a100", "--batch", "2",
                      "--calibration", str(calibration)]) == 2
    err = capsys.readouterr().err
    assert "measured on another slice configuration: addr_width None (here 40)" in err
    assert "sector_bytes 64 (here 32)" in err or "more" in err
    assert "Traceback" not in err


def test_an_unknown_slice_named_by_the_environment_exits_2(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(SLICE_VARIABLE, "huge")
    assert exit_code(["kernel", "run", "relu_fwd"]) == 2
    err = capsys.readouterr().err
    assert err == "matndp kernel run: error: MATNDP_SLICE='huge': choose one of default, channel, fpga\n"
    assert list(tmp_path.iterdir()) == []
