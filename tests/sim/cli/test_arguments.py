"""Every numeric option of ``model``, ``gpu`` and ``tier`` refuses out-of-range values where
it is parsed (exit code 2, a message naming the option and the range, no traceback), and
the named options take their choices from the host models' registries."""

import argparse

import pytest

from matndp.host.gpu import PRESETS
from matndp.host.tier.policies import TIER_POLICIES, TierPolicy
from matndp.sim.cli import build_parser
from matndp.sim.cli.arguments import integer, name_in, names_in, number, numbers

from .commands import exit_code


MODEL_SUMMARY = ["model", "summary", "resnet50"]
GPU_RUN = ["gpu", "run", "--model", "resnet50", "--gpu", "v100", "--batch", "2"]
TIER_RUN = ["tier", "run", "--model", "resnet50", "--batch", "2", "--hbm-fraction", "0.25"]
TIER_SWEEP = ["tier", "sweep", "--models", "resnet50", "--no-progress"]

AT_LEAST_1 = [("0", "must be an integer >= 1, got '0'"), ("-3", "must be an integer >= 1, got '-3'"),
              ("1.5", "must be an integer >= 1, got '1.5'"), ("x", "must be an integer >= 1, got 'x'")]
ABOVE_0 = [("0", "must be > 0, got 0.0"), ("-2", "must be > 0, got -2.0"),
           ("inf", "must be > 0, got inf"), ("nan", "must be > 0, got nan"),
           ("fast", "must be a number, got 'fast'")]

CASES = (
    [(MODEL_SUMMARY, "--batch", value, message) for value, message in AT_LEAST_1]
    + [(MODEL_SUMMARY, "--seq-len", value, message) for value, message in AT_LEAST_1]
    + [(GPU_RUN, "--batch", value, message) for value, message in AT_LEAST_1]
    + [(GPU_RUN, "--seq-len", value, message) for value, message in AT_LEAST_1]
    + [(GPU_RUN, "--gpus", value, "must be an integer in 1..1024, got " + repr(value))
       for value in ("0", "1025", "-1", "two")]
    + [(command, option, value, message) for command in (TIER_RUN, TIER_SWEEP)
       for option in ("--batch", "--seq-len", "--flash-devices") for value, message in AT_LEAST_1]
    + [(command, "--link-gbs", value, message) for command in (TIER_RUN, TIER_SWEEP)
       for value, message in ABOVE_0]
    + [(command, "--iterations", value, "must be an integer >= 2, got " + repr(value))
       for command in (TIER_RUN, TIER_SWEEP) for value in ("1", "0", "-1", "many")]
    + [(TIER_RUN, "--hbm-fraction", value, "HBM fraction " + message) for value, message in ABOVE_0]
    + [(TIER_SWEEP, "--fractions", "0.5," + value, "HBM fraction " + message)
       for value, message in ABOVE_0]
)


def _with(argv, option, value):
    argv = list(argv)
    if option in argv:
        argv[argv.index(option) + 1] = value
    else:
        argv += [f"{option}={value}"]      # '=': a value such as -3 is not taken for an option
    return argv


@pytest.mark.parametrize("argv, option, value, message", CASES,
                         ids=[f"{c[0][0]}-{c[0][1]}{c[1]}={c[2]}" for c in CASES])
def test_out_of_range_values_exit_2_naming_the_option(capsys, argv, option, value, message):
    assert exit_code(_with(argv, option, value)) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: {message}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("value, message", [("0", "HBM size must be > 0 GB, got 0.0"),
                                            ("-1", "HBM size must be > 0 GB, got -1.0"),
                                            ("inf", "HBM size must be > 0 GB, got inf"),
                                            ("lots", "HBM size must be a number, got 'lots'")])
def test_hbm_size_must_be_a_positive_number_of_gb(capsys, value, message):
    argv = ["tier", "run", "--model", "resnet50", f"--hbm-gb={value}"]
    assert exit_code(argv) == 2
    assert f"argument --hbm-gb: {message}" in capsys.readouterr().err


@pytest.mark.parametrize("argv, option, value, parsed", [
    (GPU_RUN, "--gpus", "1024", 1024), (GPU_RUN, "--gpus", "1", 1),
    (TIER_RUN, "--iterations", "2", 2), (TIER_RUN, "--link-gbs", "1e-3", 1e-3),
    (MODEL_SUMMARY, "--batch", "1", 1), (TIER_SWEEP, "--fractions", "0.5, 2", [0.5, 2.0]),
])
def test_the_bounds_themselves_are_accepted(argv, option, value, parsed):
    args = build_parser().parse_args(_with(argv, option, value))
    assert getattr(args, option[2:].replace("-", "_")) == parsed


def test_gpu_preset_names_fold_case():
    assert build_parser().parse_args(_with(GPU_RUN, "--gpu", "A100")).gpu == "a100"


def test_choices_and_help_come_from_the_registries(capsys, monkeypatch):
    class Hoard(TierPolicy):
        name = "hoard"
    monkeypatch.setitem(TIER_POLICIES, "hoard", Hoard)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["tier", "run", "--help"])
    out = capsys.readouterr().out
    assert "--policy {ideal,lru,uvm,deepum,g10,flashneuron,g10_gds_ssd,g10_gds_full,tm,hoard}" in out
    assert f"--gpu {{{','.join(PRESETS)}}}" in out
    assert build_parser().parse_args(_with(TIER_RUN, "--policy", "hoard")).policy == "hoard"


def test_all_stands_for_every_model_and_lists_are_checked():
    args = build_parser().parse_args(["tier", "sweep", "--models", "all", "--policies", "tm, lru"])
    assert args.models == ("resnet50", "vgg16_bn", "bert-base", "gpt2")
    assert args.policies == ("tm", "lru")


# ---- the types themselves -------------------------------------------------------------

def test_integer_bounds():
    assert integer(1)("7") == 7 and integer(1, 3)("3") == 3
    for parse, text in ((integer(1), "0"), (integer(1, 3), "4"), (integer(1), "2.0")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


def test_number_refuses_what_is_not_finite_and_above():
    assert number()("0.5") == 0.5 and number(above=1.0)("1.5") == 1.5
    for text in ("1", "-inf", "nan", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            number(above=1.0)(text)


def test_names_are_checked_against_the_registry():
    assert name_in(PRESETS)("h100") == "h100"
    with pytest.raises(argparse.ArgumentTypeError, match="unknown GPU preset 'H100'; known: v100, a100, h100, tpu-v4"):
        name_in(PRESETS)("H100")
    assert names_in(PRESETS, every="all")("all") == PRESETS.names
    with pytest.raises(argparse.ArgumentTypeError, match="unknown GPU preset 'p4'"):
        names_in(PRESETS)("v100,p4")
    assert numbers(number())("1, 2.5") == [1.0, 2.5]
