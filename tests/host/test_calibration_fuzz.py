"""Fuzzing the calibration files (tests/fuzzing.py): NDP kernel costs and the expander's
reduction costs, valid files mutated at random as parsed trees and as text, and random
bytes. Each reads to costs that are finite, non-negative numbers of cycles at a finite,
positive clock, or fails with a ValueError naming the file."""

import json
import math

import pytest
from hypothesis import strategies as st

from matndp.hw.config import named_config
from matndp.host.calibration import (DEFAULT_KERNELS, EXPANDER_SCHEMA, SCHEMA,
                                     configuration_record, expander_calibration_document,
                                     load_calibration, load_expander_calibration)

from tests.fuzzing import (fuzz_tests, mutated_text, mutated_tree, outcome, random_bytes,
                           read_file, refused, write_input)


_KERNELS = {"schema": SCHEMA, "clock_hz": 1.2e9, "ndp_config": configuration_record(named_config("default")),
            "kernels": {"relu_fwd": {"cycles_per_packet": 10.4, "fixed_cycles": 40},
                        "softmax_fwd": {"cycles_per_packet": 30, "after_cycles_per_packet": 9.5},
                        "adam": {"cycles_per_packet": 35}, "not_a_kernel": {}}}
_EXPANDER = expander_calibration_document(
    {"adam": {2: (110.0, 9.0), 4: (183.4, 13.0)}, "sgd_momentum": {4: (188.5, 11.0)}},
    source="a run", ndp_config=configuration_record(named_config("default")), elements=2048)
_READERS = {SCHEMA: load_calibration, EXPANDER_SCHEMA: load_expander_calibration}
_KEYS = ("schema", SCHEMA, EXPANDER_SCHEMA, "clock_hz", "kernels", "ndp_config",
         "cycles_per_packet", "fixed_cycles", "after_cycles_per_packet", "reduction",
         "cycles_per_reduced_sector", "memory_accesses_per_reduced_sector", "2", "4",
         *DEFAULT_KERNELS)


def _cycles(value, positive=False):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and (value > 0 if positive else value >= 0)


def _check(result):
    if result is None:
        return
    if hasattr(result, "kernels"):
        assert _cycles(result.hardware.clock_hz, positive=True)
        for cost in result.kernels.values():
            assert _cycles(cost.stream_cycles, positive=True), cost
            assert _cycles(cost.after_cycles) and _cycles(cost.fixed_cycles), cost
        return
    for per_port in result.points.values():
        for ports, (cycles, accesses) in per_port.items():
            assert isinstance(ports, int) and ports >= 2
            assert _cycles(cycles, positive=True) and _cycles(accesses, positive=True)
        for ports in (2, 3, 16):
            outcome(lambda: result.cycles_per_reduced_sector(next(iter(result.points)), ports),
                    ValueError, names=[result.source],
                    check=lambda cost: _cycles(cost[0], positive=True) or pytest.fail(str(cost)))


def _read(content, schema):
    read_file(_READERS[schema], "calibration.json", content, ValueError, _check)


@st.composite
def _trees(draw):
    document = draw(mutated_tree([_KERNELS, _EXPANDER], _KEYS))
    return document, draw(st.sampled_from(list(_READERS)))


def check_mutated_tree(case):
    document, schema = case
    _read(json.dumps(document), schema)


def check_mutated_text(case):
    _read(*case)


# The NDP kernel calibration files the command line's fuzz test reads.
FILES = mutated_text([json.dumps(_KERNELS, indent=1)], _KEYS) | \
    mutated_tree([_KERNELS], _KEYS).map(json.dumps) | random_bytes()

test_mutated_tree, test_mutated_tree_large = fuzz_tests(check_mutated_tree, _trees(), 200)
test_mutated_text, test_mutated_text_large = fuzz_tests(
    check_mutated_text, st.tuples(mutated_text([json.dumps(_KERNELS, indent=1),
                                                json.dumps(_EXPANDER, indent=1)], _KEYS),
                                  st.sampled_from(list(_READERS))), 60)
test_random_bytes, test_random_bytes_large = fuzz_tests(
    check_mutated_text, st.tuples(random_bytes(), st.sampled_from(list(_READERS))), 30)


def _changed(document, change):
    document = json.loads(json.dumps(document))
    change(document)
    return json.dumps(document)


# What fuzzing found, each kept as a case: (what, the reader's schema, the file's text) —
# each a ValueError naming the file, none a traceback, no infinite cost taken.
FINDINGS = [
    ("bytes that are not UTF-8", SCHEMA, b"\x80"),
    ("bytes that are not UTF-8", EXPANDER_SCHEMA, b"{\xff}"),
    ("nesting deeper than the JSON reader's recursion", SCHEMA, "[" * 100_000),
    ("a number of more digits than Python converts", EXPANDER_SCHEMA, "1" * 5000),
    ("an infinite clock", SCHEMA, _changed(_KERNELS, lambda d: d.update(clock_hz=math.inf))),
    ("an infinite cost", SCHEMA,
     _changed(_KERNELS, lambda d: d["kernels"]["adam"].update(cycles_per_packet=math.inf))),
    ("a NaN cost", SCHEMA,
     _changed(_KERNELS, lambda d: d["kernels"]["adam"].update(fixed_cycles=math.nan))),
    ("a cost beyond any float", SCHEMA,
     _changed(_KERNELS, lambda d: d["kernels"]["adam"].update(cycles_per_packet=10**400))),
    ("an infinite reduction cost", EXPANDER_SCHEMA,
     _changed(_EXPANDER, lambda d: d["reduction"]["adam"]["2"].update(cycles_per_reduced_sector=math.inf))),
]


@pytest.mark.parametrize("what, schema, text", FINDINGS, ids=[f"{f[0]}, {f[1]}" for f in FINDINGS])
def test_finding(tmp_path, what, schema, text):
    refused(_READERS[schema], tmp_path / "calibration.json", text, ValueError)


def test_finding_a_configuration_key_with_a_line_break_stays_on_one_line(tmp_path):
    """Found by the large run: the key was shown as it is, and the command line's one
    line of error became two."""
    text = _changed(_KERNELS, lambda d: d.update(ndp_config={"\r": False}))
    write_input(tmp_path / "c.json", text)
    with pytest.raises(ValueError, match="another slice configuration") as error:
        load_calibration(tmp_path / "c.json")
    assert len(str(error.value).splitlines()) == 1 and "'\\r' False" in str(error.value)
