"""Fuzzing the sweep specification (tests/fuzzing.py): specifications of every point
function, with lists and ranges, mutated at random as TOML text and as parsed tables, and
random bytes. Each gives a specification whose every point has a configuration its point
function takes and a key, as many points as it says, or fails with a :class:`SpecError`
naming the file."""

import itertools
import re
import textwrap

import pytest

from matndp.sim.sweep import SpecError, load_spec, parse_spec
from matndp.sim.sweep import spec as spec_module
from matndp.sim.sweep.registry import POINT_FUNCTIONS

from tests.fuzzing import (fuzz_tests, mutated_text, mutated_tree, outcome, random_bytes,
                           read_file, refused, toml_text, words_of)

from .sweeps import GPU_SPEC


# The module's documented example: the indented block after "a TOML file".
_DOCUMENTED = textwrap.dedent(spec_module.__doc__.split("::\n\n", 1)[1].split("\n\nAn axis", 1)[0])
_VALID_DATA = [
    GPU_SPEC,
    {"point": "tier", "seeds": {"from": 1, "to": 3, "step": 1},
     "fixed": {"model": "resnet50", "policy": "lru"},
     "axes": {"hbm_fraction": {"from": 0.25, "to": 1.0, "count": 4},
              "link_gbs": {"from": 8, "to": 64, "times": 2}}},
    {"point": "rtl-bench", "seeds": [1, 2],
     "fixed": {"kernel": "relu_fwd", "problem": {"elements": 256}},
     "axes": {"slots": [4, 16], "pressure": {"from": 0.0, "to": 0.5, "step": 0.25}}},
]
_VALID_TEXTS = [_DOCUMENTED] + [toml_text(data) for data in _VALID_DATA]
_KEYS = words_of(("point", "seeds", "fixed", "axes", "from", "to", "step", "times", "count"),
                 POINT_FUNCTIONS.names,
                 (parameter.name for function in POINT_FUNCTIONS.values()
                  for parameter in function.parameters))
_TOML_WORDS = _KEYS + ("[fixed]", "[axes]", " = ", "{ from = 1, to = 100000, step = 1 }",
                       "inf", "nan", "-inf", "1e308", "1979-05-27", "[]", "{}", "true", "0.1")
# Points enumerated per case at most, to check each (a larger specification is checked by
# its count and first points).
_CHECKED_POINTS = 2000


def _check_spec(spec):
    function = POINT_FUNCTIONS[spec.function]
    count = len(spec)
    assert count >= 1
    points = list(itertools.islice(spec.points(), _CHECKED_POINTS))
    assert len(points) == min(count, _CHECKED_POINTS)
    for point in points:
        for key, value in point.config.items():
            assert function.parameter(key).check(value) is None or value is None, (key, value)
        assert point.seed is None or (type(point.seed) is int and point.seed >= 0)
        assert isinstance(point.key, str)


def _read(content):
    read_file(load_spec, "sweep.toml", content, SpecError, _check_spec)


def check_mutated_tree(data):
    outcome(lambda: parse_spec(data, source="fuzzed.toml"), SpecError, names=["fuzzed.toml"],
            check=_check_spec)


# The files the command line's fuzz test reads.
FILES = mutated_text(_VALID_TEXTS, _TOML_WORDS) | mutated_tree(_VALID_DATA, _KEYS).map(toml_text) | \
    random_bytes()

test_mutated_text, test_mutated_text_large = fuzz_tests(
    _read, mutated_text(_VALID_TEXTS, _TOML_WORDS), 100)
test_mutated_tree, test_mutated_tree_large = fuzz_tests(
    check_mutated_tree, mutated_tree(_VALID_DATA, _KEYS), 150)
test_random_bytes, test_random_bytes_large = fuzz_tests(_read, random_bytes(), 30)


# What fuzzing found, each kept as a case: (what, the file's text, part of the message) —
# each a SpecError naming the file, none a traceback or a hang.
FINDINGS = [
    ("bytes that are not UTF-8", b'point = "gpu"\n\x80', "not a UTF-8 text file"),
    ("a range to infinity", 'point = "gpu"\n[axes]\nbatch = {from = 1, to = inf, times = 2}\n',
     "range 'to' must be a finite number"),
    ("a range to NaN", 'point = "gpu"\n[axes]\nbatch = {from = 1, to = nan, step = 1}\n',
     "range 'to' must be a finite number"),
    ("a count of a billion, built before it was checked",
     'point = "gpu"\n[axes]\nbatch = {from = 1, to = 2, count = 1000000000}\n',
     "a range of 1000000000 values"),
    ("a span beyond any float", 'point = "tier"\n[axes]\nlink_gbs = {from = -1e308, to = 1e308, '
     'step = 1e300}\n', "a range of inf values"),
    ("a geometric range from the least float", 'point = "tier"\n[axes]\n'
     'link_gbs = {from = 5e-324, to = 1e308, times = 1.5}\n', "a range of inf values"),
    ("two long axes, their product enumerated before it was checked",
     'point = "gpu"\n[fixed]\nmodel = "resnet50"\n[axes]\nbatch = {from = 1, to = 1000, step = 1}\n'
     'expanders = {from = 1, to = 1000, step = 1}\n', "1000000 points (more than 100000)"),
]


@pytest.mark.parametrize("what, text, message", FINDINGS, ids=[f[0] for f in FINDINGS])
def test_finding(tmp_path, what, text, message):
    refused(load_spec, tmp_path / "sweep.toml", text, SpecError)
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(tmp_path / "sweep.toml")


def test_finding_a_specification_that_is_not_a_table():
    with pytest.raises(SpecError, match="fuzzed.toml: a specification is a table"):
        parse_spec(None, source="fuzzed.toml")


def test_finding_a_range_from_an_integer_past_the_largest_float():
    """Found by the large run: math.isfinite of the integer overflowed (TOML's integers are
    64-bit; parse_spec takes what Python gives it)."""
    data = {"point": "gpu", "fixed": {"model": "resnet50"},
            "seeds": {"from": 10**400, "to": 3, "step": 1}}
    with pytest.raises(SpecError, match="fuzzed.toml: seeds: step 1 does not lead"):
        parse_spec(data, source="fuzzed.toml")
    data["seeds"] = {"from": -10**400, "to": 10**400, "step": 1}
    with pytest.raises(SpecError, match="fuzzed.toml: seeds: a range of inf values"):
        parse_spec(data, source="fuzzed.toml")


def test_finding_a_key_with_a_line_break_stays_on_one_line():
    """Keys are quoted in messages when they hold control characters, as the large run
    found the workload's and the set-up's readers needed."""
    for data in ({"point": "gpu", "\n": 1}, {"point": "gpu", "fixed": {"\r": 1}},
                 {"point": "gpu", "axes": {"\n": [1]}}):
        with pytest.raises(SpecError) as error:
            parse_spec(data, source="fuzzed.toml")
        assert len(str(error.value).splitlines()) == 1, error.value
