"""Fuzzing the workload file (tests/fuzzing.py): valid workload files mutated at random, as
parsed trees and as text, and random bytes. Each reads to a graph that is what the file
says (every name a string, every size and count a non-negative integer, every duration a
finite number of seconds, and a file written from it reads back to the same graph), or
fails with a :class:`WorkloadError` naming the file."""

import json
import math
import pathlib

import pytest

from matndp.host.graph import Op, Tensor
from matndp.host.workload import (WorkloadError, dump_workload, load_workload, read_g10,
                                  read_workload)
from matndp.host.workload.format import _OP, _TENSOR, _TOP

from tests.fuzzing import (fuzz_tests, mutated_text, mutated_tree, outcome, random_bytes,
                           read_file, refused, write_input)


FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "g10"
_HAND_WRITTEN = {
    "format": "matndp-workload", "version": 1, "name": "tiny", "batch": 2, "dtype": "fp16",
    "meta": {"source": "by hand", "layers": [1, 2]},
    "tensors": [{"id": "x", "kind": "input", "bytes": 4096},
                {"id": "w", "kind": "weight", "dtype": "fp16", "shape": [64, 3, 7, 7]},
                {"id": "y", "kind": "activation", "dtype": "fp32", "shape": [2, 64]},
                {"id": "g", "kind": "gradient", "bytes": 512, "dtype": "bf16"}],
    "ops": [{"name": "conv", "kind": "conv", "phase": "forward", "flops": 118013952,
             "inputs": ["x", "w"], "outputs": ["y"], "duration_s": 0.0012,
             "fault_duration_s": 0.003, "output_fault_duration_s": 0.002,
             "attrs": {"layer": "conv1"}},
            {"name": "back", "kind": "conv", "phase": "backward", "inputs": ["y"],
             "outputs": ["g"], "deps": ["conv"]},
            {"name": "step", "kind": "optimizer", "phase": "optimizer", "flops": 0,
             "inputs": ["g", "w"], "outputs": ["w"], "deps": ["back"]}]}
_VALID = [_HAND_WRITTEN, dump_workload(read_g10(FIXTURE))]
_TEXTS = [json.dumps(document, indent=1) for document in _VALID]
_KEYS = tuple(sorted(_TOP | _TENSOR | _OP)) + ("fp32", "weight", "forward", "x", "conv")


def _finite_seconds(value):
    return value is None or (isinstance(value, float) and math.isfinite(value) and value >= 0)


def check_graph(graph):
    """Whether ``graph`` is what a workload file can say (see the module's text)."""
    assert isinstance(graph.name, str) and isinstance(graph.dtype, str)
    assert isinstance(graph.batch, int) and graph.batch >= 1
    assert isinstance(graph.meta, dict)
    for tensor_id, tensor in graph.tensors.items():
        assert isinstance(tensor, Tensor) and isinstance(tensor_id, str)
        assert isinstance(tensor.bytes, int) and not isinstance(tensor.bytes, bool)
        assert tensor.bytes >= 0
        assert all(type(size) is int for size in tensor.shape)
    for op in graph.ops:
        assert isinstance(op, Op) and isinstance(op.name, str) and isinstance(op.kind, str)
        assert type(op.flops) is int and op.flops >= 0
        assert isinstance(op.attrs, dict)
        for key in ("duration_s", "fault_duration_s", "output_fault_duration_s"):
            assert _finite_seconds(getattr(op, key)), (key, getattr(op, key))
    again = load_workload(json.loads(json.dumps(dump_workload(graph))))
    assert again.tensors == graph.tensors and again.ops == graph.ops
    assert (again.name, again.batch, again.dtype) == (graph.name, graph.batch, graph.dtype)


def _read_file(content):
    read_file(read_workload, "workload.json", content, WorkloadError, check_graph)


def check_mutated_tree(document):
    outcome(lambda: load_workload(document, "fuzzed.json"), WorkloadError,
            names=["fuzzed.json"], check=check_graph)


# The files the command line's fuzz test reads.
FILES = mutated_text(_TEXTS, _KEYS) | mutated_tree(_VALID, _KEYS).map(json.dumps) | random_bytes()

test_mutated_tree, test_mutated_tree_large = fuzz_tests(
    check_mutated_tree, mutated_tree(_VALID, _KEYS), 200)
test_mutated_text, test_mutated_text_large = fuzz_tests(
    _read_file, mutated_text(_TEXTS, _KEYS), 60)
test_random_bytes, test_random_bytes_large = fuzz_tests(_read_file, random_bytes(), 40)


# What fuzzing found, each kept as a case: (what, the file's text) — each a WorkloadError
# naming the file, none a traceback.
def _changed(change):
    document = json.loads(json.dumps(_HAND_WRITTEN))
    change(document)
    return json.dumps(document)


FINDINGS = [
    ("bytes that are not UTF-8", b"\x80"),
    ("nesting deeper than the JSON reader's recursion", "[" * 100_000),
    ("a number of more digits than Python converts", "1" * 5000),
    ("a tensor id that is a list", _changed(lambda d: d["tensors"][0].update(id=["x"]))),
    ("an op name that is a list", _changed(lambda d: d["ops"][0].update(name=["conv"]))),
    ("a dtype that is a list", _changed(lambda d: d["tensors"][1].update(dtype=["fp16"]))),
    ("no list of tensors", _changed(lambda d: d.update(tensors=None))),
    ("no list of ops", _changed(lambda d: d.update(ops=7))),
    ("attrs that are not an object", _changed(lambda d: d["ops"][0].update(attrs="ab"))),
    ("meta that is not an object", _changed(lambda d: d.update(meta=[1]))),
    ("a duration beyond any float", _changed(lambda d: d["ops"][0].update(duration_s=10**400))),
    ("an infinite duration", _changed(lambda d: d["ops"][0].update(fault_duration_s=math.inf))),
    ("a shape of booleans", _changed(lambda d: d["tensors"][1].update(shape=[True, 3]))),
    ("a workload name that is a number", _changed(lambda d: d.update(name=5))),
]


@pytest.mark.parametrize("what, text", FINDINGS, ids=[what for what, _ in FINDINGS])
def test_finding(tmp_path, what, text):
    refused(read_workload, tmp_path / "workload.json", text, WorkloadError)


def test_finding_an_unknown_field_with_a_line_break_stays_on_one_line(tmp_path):
    """Found by the large run: the field's name was shown as it is, and the command line's
    one line of error became two."""
    text = _changed(lambda d: d["tensors"][0].update({"\r": 1}))
    with pytest.raises(WorkloadError, match="unknown field") as error:
        read_workload(write_input(tmp_path / "w.json", text))
    assert len(str(error.value).splitlines()) == 1 and "'\\r'" in str(error.value)
