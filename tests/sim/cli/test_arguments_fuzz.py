"""Fuzzing the command line's numeric options (tests/fuzzing.py): every option of every
command whose value is a number (or a list or range of numbers) is given random text,
numbers at and past every limit, and mutated valid values. A value is either taken as a
number within the bounds the option's own error message states, or refused by argparse
with exit code 2 and one line naming the option — never a traceback."""

import argparse
import contextlib
import io
import math
import re

from hypothesis import strategies as st

from matndp.sim.cli import build_parser, parsers

from tests.fuzzing import fuzz_tests, mutated_text, time_limit


# The argument types of sim/cli/arguments.py and the commands' own, by name.
_NUMERIC = ("integer.<locals>.parse", "number.<locals>.parse", "fraction.<locals>.parse",
            "numbers.<locals>.parse", "_window", "_count_or_all")


def _numeric_options():
    found = []
    for parser in parsers(build_parser()):
        for action in parser._actions:
            if action.option_strings and getattr(action.type, "__qualname__", "") in _NUMERIC:
                found.append((parser, action))
    return found


_OPTIONS = _numeric_options()
_INTEGER_BOUNDS = re.compile(r"must be an integer (?:>= (-?\d+)|in (-?\d+)\.\.(-?\d+))")
_NUMBER_BOUNDS = re.compile(r"must be (?:> (\S+?)(?: \w+)?|in \((\S+), (\S+)\](?: \w+)?), got")
_FRACTION_BOUNDS = re.compile(r"in \[(\S+), (\S+)\)")


def _refusal(parse, text):
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            parse(text)
        except argparse.ArgumentTypeError as error:
            return str(error)
    raise AssertionError(f"{text!r} was taken")


def _check_number(kind, parse, value):
    """Whether ``value`` is within the bounds ``parse`` states when it refuses a value."""
    if kind == "integer.<locals>.parse":
        low, only_low, high = _INTEGER_BOUNDS.search(_refusal(parse, "x")).groups()
        assert type(value) is int, value
        assert value >= int(low or only_low) and (high is None or value <= int(high)), value
    elif kind == "number.<locals>.parse":
        above, low, high = _NUMBER_BOUNDS.search(_refusal(parse, "nan")).groups()
        assert isinstance(value, float) and math.isfinite(value), value
        assert value > float(above or low) and (high is None or value <= float(high)), value
    elif kind == "fraction.<locals>.parse":
        low, high = _FRACTION_BOUNDS.search(_refusal(parse, "x")).groups()
        assert isinstance(value, float) and float(low) <= value < float(high), value
    else:
        raise AssertionError(f"no bounds known for {kind}")


def _check_value(action, value):
    kind = action.type.__qualname__
    if kind == "_window":
        assert value is None or (type(value[0]) is int and type(value[1]) is int
                                 and 0 <= value[0] < value[1]), value
    elif kind == "_count_or_all":
        assert value is None or (type(value) is int and value >= 1), value
    elif kind == "numbers.<locals>.parse":
        # a list of the numbers the closure's own type takes: each checked by that type
        one = action.type.__closure__[0].cell_contents
        assert isinstance(value, list) and value
        for item in value:
            _check_number(one.__qualname__, one, item)
    else:
        _check_number(kind, action.type, value)


_WORDS = ("0", "1", "-1", "2", "8", "0.5", "1e3", "1e-400", "1e400", "inf", "-inf", "nan", "NaN",
          "all", "none", ":", ",", "0:2", "2:0", "4294967295", "4294967296", "1_000", " ", "٣",
          "0x10", "+", "-", ".", "e", "9" * 5000)
_TEXTS = (st.text(max_size=12) | st.integers().map(str) | st.floats().map(repr)
          | st.sampled_from(_WORDS) | mutated_text(["1", "0.5", "8", "0:2", "all", "0.125,0.25"], _WORDS))


def check_option(case):
    index, text = case
    parser, action = _OPTIONS[index]
    option = action.option_strings[-1]
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), time_limit():
        try:
            value = action.type(text)
        except argparse.ArgumentTypeError:
            value = None
            refused = True
        else:
            refused = False
        try:
            parsed = getattr(parser.parse_args([f"{option}={text}"]), action.dest)
        except SystemExit as exit:
            assert exit.code == 2, exit.code
            parsed = exit
    if refused:
        last = stderr.getvalue().splitlines()[-1]
        assert isinstance(parsed, SystemExit), parsed
        assert last.startswith(f"{parser.prog}: error: argument {'/'.join(action.option_strings)}: "), last
    else:
        _check_value(action, value)
        assert isinstance(parsed, SystemExit) or parsed == (value if action.nargs is None else [value])


_CASES = st.tuples(st.integers(0, len(_OPTIONS) - 1), _TEXTS)
test_numeric_option, test_numeric_option_large = fuzz_tests(check_option, _CASES, 400)


def test_every_numeric_option_is_fuzzed():
    """The options found include those of every kind (a renamed argument type would
    otherwise drop out of the fuzzing unnoticed)."""
    kinds = {action.type.__qualname__ for _, action in _OPTIONS}
    assert kinds == set(_NUMERIC)
    assert len(_OPTIONS) >= 30


def test_finding_an_option_given_as_two_dashes_is_judged_by_its_type():
    """``--gpus=--`` left the option an empty list (Python 3.11's argparse dropped the
    ``--``); it is refused as the text it is."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        for argv in (["gpu", "run", "--gpus=--"], ["synth", "--seed=--"],
                     ["kernel", "asm", "k.s", "--instruction-words=--"]):
            try:
                build_parser().parse_args(argv)
            except SystemExit as exit:
                assert exit.code == 2
            assert f"argument {argv[-1].split('=')[0]}: must be an integer" in stderr.getvalue()
