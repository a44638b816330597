"""The workload file: export, import, the same simulation; and clear errors for bad files."""

import json
from pathlib import Path

import numpy as np
import pytest

from matndp.host.gpu import get_preset, op_time_s
from matndp.host.graph import GraphError, Op, Tensor
from matndp.host.tier import TierConfig, flash_preset, simulate
from matndp.host.workload import (FORMAT, VERSION, WorkloadError, dump_workload, load_workload,
                                  read_g10, read_workload, write_workload)
from matndp.host.zoo import build_model

from .refusal import check_json_file_refusals, refused


FIXTURE = Path(__file__).parent / "fixtures" / "g10"


def _simulate(graph, policy, tier=TierConfig(hbm_fraction=0.4)):
    gpu = get_preset("a100")
    times = np.array([op_time_s(graph, op, gpu) for op in graph.ops])
    return simulate(graph, times, tier, flash_preset("zssd"), policy).metrics


@pytest.mark.parametrize("policy", ["ideal", "lru", "g10", "tm"])
def test_a_zoo_model_round_trips_to_identical_results(tmp_path, policy):
    graph = build_model("resnet50", batch=2)
    copy = read_workload(write_workload(graph, tmp_path / "resnet50.json"))
    assert copy.tensors == graph.tensors and copy.ops == graph.ops
    assert [op.attrs for op in copy.ops] == [op.attrs for op in graph.ops]
    assert (copy.name, copy.batch, copy.dtype, copy.meta) == (graph.name, graph.batch,
                                                              graph.dtype, graph.meta)
    assert _simulate(copy, policy) == _simulate(graph, policy)


def test_a_trace_with_sizes_and_durations_round_trips(tmp_path):
    graph = read_g10(FIXTURE)
    # written into folders that do not exist yet: they are made
    copy = read_workload(write_workload(graph, tmp_path / "traces" / "g10" / "g10.json"))
    assert copy.tensors == graph.tensors and copy.ops == graph.ops
    assert copy.tensors["tensor3"].bytes == 12000 and copy.tensors["tensor3"].shape == ()
    assert [op.duration_s for op in copy.ops] == [op.duration_s for op in graph.ops]
    tier = TierConfig(hbm_bytes=9 * 4096)      # of an 11-page footprint
    for policy in ("ideal", "lru", "g10", "tm"):
        assert _simulate(copy, policy, tier) == _simulate(graph, policy, tier)


def test_a_measured_duration_replaces_the_gpu_model():
    graph = read_g10(FIXTURE)
    gpu = get_preset("a100")
    assert [op_time_s(graph, op, gpu) for op in graph.ops] == [0.5e-3, 1.25e-3, 0.125e-3,
                                                                2e-3, 0.0625e-3]
    metrics = _simulate(graph, "ideal", TierConfig(hbm_fraction=1.0))
    assert metrics["iteration_s"] == pytest.approx(3.9375e-3, rel=1e-15)
    assert metrics["ideal_iteration_s"] == metrics["iteration_s"]


def test_the_file_is_versioned():
    content = dump_workload(read_g10(FIXTURE))
    assert (content["format"], content["version"]) == (FORMAT, VERSION) == ("matndp-workload", 1)
    assert content["tensors"][0] == {"id": "tensor0", "kind": "activation", "bytes": 16384}


def _broken(**changes):
    content = dump_workload(read_g10(FIXTURE))
    for key, value in changes.items():
        content[key] = value
    return content


@pytest.mark.parametrize("content, message", [
    (_broken(version=2), "version 2 is not supported"),
    (_broken(format="other"), "not a workload file"),
    (_broken(batch=0), "batch must be an integer >= 1"),
    (_broken(colour="red"), "unknown field(s) colour"),
    (_broken(tensors=[{"id": "t", "kind": "activation", "bytes": -1}]), "bytes must be an integer >= 0"),
    (_broken(tensors=[{"id": "t", "kind": "activation", "bytes": 4, "shape": [1]}]), "bytes or shape, not both"),
    (_broken(tensors=[{"id": "t", "kind": "blob", "bytes": 4}]), "unknown kind 'blob'"),
    (_broken(tensors=[{"id": "t", "kind": "activation", "byte": 4}]), "unknown field(s) byte"),
    (_broken(tensors=[]), "names unknown tensor 'tensor0'"),
    (_broken(ops=[{"name": "a", "kind": "gemm", "phase": "forward", "duration_s": "fast"}]),
     "duration_s must be a number"),
    (_broken(ops=[{"name": "a", "kind": "gemm", "phase": "forward", "duration_s": -1.0}]),
     "bad duration -1.0 s"),
    (_broken(ops=[{"name": "a", "kind": "gemm"}]), "op 'a': missing field 'phase'"),
    (_broken(ops=[{"name": "a", "kind": "gemm", "phase": "forward", "inputs": "tensor0"}]),
     "op 'a': inputs must be a list of names, got 'tensor0'"),
])
def test_bad_content_is_refused_naming_the_file(content, message):
    with pytest.raises(WorkloadError, match=r"^w\.json: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        load_workload(content, "w.json")


def test_bad_json_names_the_line(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"format": "matndp-workload",\n "version": 1,\n "name" "x"}\n')
    with pytest.raises(WorkloadError, match=r"w.json:3: not JSON"):
        read_workload(path)
    with pytest.raises(WorkloadError, match="cannot read"):
        read_workload(tmp_path / "absent.json")


def test_sized_tensors_and_durations_are_checked_where_made():
    with pytest.raises(GraphError, match="bad byte size"):
        Tensor("t", (), "fp32", "activation", size_bytes=-4)
    with pytest.raises(GraphError, match="bad duration"):
        Op("a", "gemm", "forward", 0, (), (), duration_s=float("nan"))
    assert Tensor("t", (), "fp32", "activation", size_bytes=12000).bytes == 12000


def _tiny(**changes):
    """A one-tensor, one-op workload, with top-level fields replaced by ``changes``."""
    content = {"format": FORMAT, "version": VERSION, "name": "tiny", "batch": 1,
               "tensors": [{"id": "x", "kind": "activation", "bytes": 4}],
               "ops": [{"name": "a", "kind": "gemm", "phase": "forward", "outputs": ["x"]}]}
    content.update(changes)
    return content


def _op(**fields):
    return {"name": "b", "kind": "gemm", "phase": "forward", **fields}


_KNOWN_TOP = "batch, dtype, format, meta, name, ops, tensors, version"


@pytest.mark.parametrize("content, message", [
    ([], "the workload must be an object, got list"),
    (_tiny(colour="red"), f"the workload: unknown field(s) colour (known: {_KNOWN_TOP})"),
    ({**_tiny(), "\n": 1}, f"the workload: unknown field(s) '\\n' (known: {_KNOWN_TOP})"),
    (_tiny(format=None), "not a workload file (format None, expected 'matndp-workload')"),
    (_tiny(version="1"),
     "workload format version '1' is not supported (this reader knows version 1)"),
    ({key: value for key, value in _tiny().items() if key != "batch"},
     "the workload: missing field 'batch'"),
    (_tiny(batch=True), "batch must be an integer >= 1, got True"),
    (_tiny(batch=1.0), "batch must be an integer >= 1, got 1.0"),
    (_tiny(tensors={}), "the workload: tensors must be a list, got {}"),
    (_tiny(ops=None), "the workload: ops must be a list, got None"),
    (_tiny(name=7), "the workload: name must be a string, got 7"),
    (_tiny(dtype=32), "the workload: dtype must be a string, got 32"),
    (_tiny(meta=[1]), "the workload: meta must be an object, got [1]"),
    (_tiny(tensors=[{"id": "x", "kind": "activation", "bytes": 4}, 5]),
     "tensors[1] must be an object, got int"),
    (_tiny(tensors=[{"kind": "activation", "bytes": 4}]), "tensors[0]: missing field 'id'"),
    (_tiny(tensors=[{"id": 3, "kind": "activation", "bytes": 4}]),
     "tensors[0]: id must be a string, got 3"),
    (_tiny(tensors=[{"id": "x", "bytes": 4}]), "tensor 'x': missing field 'kind'"),
    (_tiny(tensors=[{"id": "x", "kind": "activation", "bytes": 4.0}]),
     "tensor 'x': bytes must be an integer >= 0, got 4.0"),
    (_tiny(tensors=[{"id": "x", "kind": "activation", "bytes": 4, "dtype": 2}]),
     "tensor 'x': dtype must be a string, got 2"),
    (_tiny(tensors=[{"id": "x", "kind": "activation"}]), "tensor 'x': missing field 'shape'"),
    (_tiny(tensors=[{"id": "x", "kind": "activation", "shape": 4}]),
     "tensor 'x': shape must be a list, got 4"),
    (_tiny(tensors=[{"id": "x", "kind": "activation", "shape": [2, -1]}]),
     "tensor 'x': shape must be a list of integers >= 0, got [2, -1]"),
    (_tiny(tensors=[{"id": "x", "kind": "activation", "shape": [2]}]),
     "tensor 'x': missing field 'dtype'"),
    (_tiny(tensors=[{"id": "x", "kind": "activation", "shape": [2], "dtype": "fp7"}]),
     "tensor 'x': unknown dtype 'fp7'"),
    (_tiny(ops=[_tiny()["ops"][0], "op"]), "ops[1] must be an object, got str"),
    (_tiny(ops=[_op(colour=1)]),
     "ops[0]: unknown field(s) colour (known: attrs, deps, duration_s, fault_duration_s, "
     "flops, inputs, kind, name, output_fault_duration_s, outputs, phase)"),
    (_tiny(ops=[{"kind": "gemm"}]), "ops[0]: missing field 'name'"),
    (_tiny(ops=[_op(name=None)]), "ops[0]: name must be a string, got None"),
    (_tiny(ops=[_op(fault_duration_s=True)]), "op 'b': fault_duration_s must be a number, got True"),
    (_tiny(ops=[_op(output_fault_duration_s=10 ** 400)]),
     "op 'b': output_fault_duration_s 1" + "0" * 400 + " s is beyond any float"),
    (_tiny(ops=[_op(fault_duration_s=-0.5)]), "op 'b': bad fault_duration_s -0.5 s"),
    (_tiny(ops=[_op(flops=-1)]), "op 'b': flops must be an integer >= 0, got -1"),
    (_tiny(ops=[_op(flops=False)]), "op 'b': flops must be an integer >= 0, got False"),
    (_tiny(ops=[_op(outputs=["x", 1])]), "op 'b': outputs must be a list of names, got ['x', 1]"),
    (_tiny(ops=[_op(deps="a")]), "op 'b': deps must be a list of names, got 'a'"),
    (_tiny(ops=[_op(attrs=[])]), "op 'b': attrs must be an object, got []"),
    (_tiny(ops=[_op(kind=1)]), "op 'b': kind must be a string, got 1"),
    (_tiny(ops=[_op(phase="sideways")]), "op 'b': unknown phase 'sideways'"),
    (_tiny(ops=[_op(deps=["z"])]), "tiny: op 'b' depends on 'z', which does not come before it"),
])
def test_every_refusal_of_the_workload_reader_says_what_and_where(content, message):
    with refused("w.json", message) as caught:
        load_workload(content, "w.json")
    assert (caught.value.path, caught.value.line) == ("w.json", None)


def test_an_unreadable_or_undecodable_file_is_refused_by_name(tmp_path):
    path = tmp_path / "w.json"
    check_json_file_refusals(read_workload, path)
    path.write_text(json.dumps(_tiny(name="from-file")))
    assert read_workload(path).name == "from-file"
