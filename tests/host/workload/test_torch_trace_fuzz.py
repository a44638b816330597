"""Fuzzing the PyTorch profiler importer (tests/fuzzing.py): a Chrome trace with kernels,
launches, CPU ops and allocator events, mutated at random as a parsed tree and as text, and
random bytes. Each reads to a graph that is what a workload file can say, with one op per
GPU activity of the trace, or fails with a :class:`WorkloadError` naming the file."""

import json
import math

import pytest

from matndp.host.workload import WorkloadError, read_torch_trace

from tests.fuzzing import fuzz_tests, mutated_text, mutated_tree, random_bytes, read_file, refused

from .test_format_fuzz import check_graph
from .test_torch_trace import _trace


_VALID = [_trace(), _trace()["traceEvents"]]
_KEYS = ("traceEvents", "ph", "X", "i", "cat", "kernel", "gpu_memset", "gpu_memcpy",
         "cuda_runtime", "cpu_op", "name", "[memory]", "ts", "dur", "args", "correlation",
         "Addr", "Bytes", "Device Type", "Optimizer.step", "backward")


def _read(content):
    read_file(read_torch_trace, "trace.json", content, WorkloadError,
              lambda graph: _check_graph(graph, content))


def _check_graph(graph, content):
    check_graph(graph)
    document = json.loads(content)
    events = document["traceEvents"] if isinstance(document, dict) else document
    kernels = [event for event in events if isinstance(event, dict) and event.get("cat") in
               ("kernel", "gpu_memset", "gpu_memcpy") and event.get("ph") == "X"]
    assert len(graph.ops) == len(kernels)


def check_mutated_tree(document):
    _read(json.dumps(document))


# The files the command line's fuzz test reads.
FILES = mutated_text([json.dumps(document, indent=1) for document in _VALID], _KEYS) | \
    mutated_tree(_VALID, _KEYS).map(json.dumps) | random_bytes()

test_mutated_tree, test_mutated_tree_large = fuzz_tests(
    check_mutated_tree, mutated_tree(_VALID, _KEYS), 150)
test_mutated_text, test_mutated_text_large = fuzz_tests(
    _read, mutated_text([json.dumps(document, indent=1) for document in _VALID], _KEYS), 60)
test_random_bytes, test_random_bytes_large = fuzz_tests(_read, random_bytes(), 30)


def _changed(change):
    document = _trace()
    change(document["traceEvents"])
    return json.dumps(document)


# What fuzzing found, each kept as a case: (what, the trace's text) — each a WorkloadError
# naming the file, none a traceback.
FINDINGS = [
    ("bytes that are not UTF-8", b"\x80"),
    ("nesting deeper than the JSON reader's recursion", "[" * 100_000),
    ("args that are a list", _changed(lambda events: events[3].update(args=[1]))),
    ("a correlation id that is a list", _changed(lambda events: events[3]["args"].update(correlation=[1]))),
    ("a kernel's correlation id that is an object", _changed(lambda events: events[4]["args"].update(correlation={}))),
    ("a time stamp beyond any float", _changed(lambda events: events[4].update(ts=10**400))),
    ("a duration that is not a number", _changed(lambda events: events[4].update(dur=math.nan))),
    ("a negative duration (found by the large run)", _changed(lambda events: events[4].update(dur=-1))),
    ("an allocation of true bytes", _changed(lambda events: events[2]["args"].update(Bytes=True))),
]


@pytest.mark.parametrize("what, text", FINDINGS, ids=[what for what, _ in FINDINGS])
def test_finding(tmp_path, what, text):
    refused(read_torch_trace, tmp_path / "trace.json", text, WorkloadError)
