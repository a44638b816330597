"""The workload file: one training iteration as JSON, versioned.

```
{"format": "matndp-workload", "version": 1,
 "name": "resnet50", "batch": 32, "dtype": "fp32", "meta": {...},
 "tensors": [{"id": "x", "kind": "activation", "bytes": 4096}, ...
             {"id": "w", "kind": "weight", "dtype": "fp32", "shape": [64, 3, 7, 7]}],
 "ops": [{"name": "conv1", "kind": "conv", "phase": "forward", "flops": 118013952,
          "inputs": ["x", "w"], "outputs": ["y"], "deps": [], "duration_s": 0.0012,
          "attrs": {...}}, ...]}
```

A tensor has either ``bytes`` (its size, as traces know it) or ``dtype`` and ``shape``
(``bytes`` is then their product); ``kind`` is one of :data:`host.graph.TENSOR_KINDS`
(weights and optimizer state persist across iterations). Ops are in execution order;
``duration_s`` (optional) is a measured run time that replaces the GPU model's estimate;
``fault_duration_s`` and ``output_fault_duration_s`` (optional) are its run times when every
page of its inputs and outputs faults, and when only its outputs' pages do (G10's
fault-laden kernel times; demand paging times a faulting op from them);
``flops`` (optional, default 0) feeds the roofline estimate and the energy; ``deps`` and
``attrs`` are optional. Unknown keys are refused, so a misspelt field is an error rather
than a silent default.
"""

import json
from pathlib import Path

from ..graph import GraphError, IterationGraph, Op, Tensor
from .errors import WorkloadError


__all__ = ["FORMAT", "VERSION", "dump_workload", "load_workload", "write_workload",
           "read_workload"]

FORMAT = "matndp-workload"
VERSION = 1

_TOP = {"format", "version", "name", "batch", "dtype", "meta", "tensors", "ops"}
_TENSOR = {"id", "kind", "bytes", "dtype", "shape"}
_DURATIONS = ("duration_s", "fault_duration_s", "output_fault_duration_s")
_OP = {"name", "kind", "phase", "flops", "inputs", "outputs", "deps", "attrs", *_DURATIONS}


def dump_workload(graph):
    """The workload file's content (a dict) for ``graph``."""
    tensors = []
    for tensor in graph.tensors.values():
        entry = {"id": tensor.id, "kind": tensor.kind}
        if tensor.size_bytes is not None:
            entry["bytes"] = tensor.size_bytes
            if tensor.dtype != "fp32":
                entry["dtype"] = tensor.dtype
        else:
            entry["dtype"] = tensor.dtype
            entry["shape"] = list(tensor.shape)
        tensors.append(entry)
    ops = []
    for op in graph.ops:
        entry = {"name": op.name, "kind": op.kind, "phase": op.phase, "flops": op.flops,
                 "inputs": list(op.inputs), "outputs": list(op.outputs)}
        if op.deps:
            entry["deps"] = list(op.deps)
        for key in _DURATIONS:
            if getattr(op, key) is not None:
                entry[key] = getattr(op, key)
        if op.attrs:
            entry["attrs"] = op.attrs
        ops.append(entry)
    return {"format": FORMAT, "version": VERSION, "name": graph.name, "batch": graph.batch,
            "dtype": graph.dtype, "meta": graph.meta, "tensors": tensors, "ops": ops}


def _check_keys(path, entry, allowed, what):
    if not isinstance(entry, dict):
        raise WorkloadError(path, f"{what} must be an object, got {type(entry).__name__}")
    unknown = set(entry) - allowed
    if unknown:
        # quoted when a name holds control characters, so that the message stays one line
        shown = sorted(name if name.isprintable() else repr(name) for name in unknown)
        raise WorkloadError(path, f"{what}: unknown field(s) {', '.join(shown)} "
                                  f"(known: {', '.join(sorted(allowed))})")


def _require(path, entry, key, what):
    if key not in entry:
        raise WorkloadError(path, f"{what}: missing field {key!r}")
    return entry[key]


def _text(path, entry, key, what, default=None):
    """The string ``entry[key]`` (``default`` when it is absent and there is one)."""
    value = entry.get(key, default) if default is not None else _require(path, entry, key, what)
    if not isinstance(value, str):
        raise WorkloadError(path, f"{what}: {key} must be a string, got {value!r}")
    return value


def _list(path, entry, key, what):
    value = _require(path, entry, key, what)
    if not isinstance(value, list):
        raise WorkloadError(path, f"{what}: {key} must be a list, got {value!r}")
    return value


def _object(path, entry, key, what):
    value = entry.get(key, {})
    if not isinstance(value, dict):
        raise WorkloadError(path, f"{what}: {key} must be an object, got {value!r}")
    return value


def _count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _tensor(path, number, entry):
    what = f"tensors[{number}]"
    _check_keys(path, entry, _TENSOR, what)
    tensor_id = _text(path, entry, "id", what)
    what = f"tensor {tensor_id!r}"
    kind = _text(path, entry, "kind", what)
    if "bytes" in entry:
        if "shape" in entry:
            raise WorkloadError(path, f"{what}: give bytes or shape, not both")
        size = entry["bytes"]
        if not _count(size):
            raise WorkloadError(path, f"{what}: bytes must be an integer >= 0, got {size!r}")
        return Tensor(tensor_id, (), _text(path, entry, "dtype", what, "fp32"), kind,
                      size_bytes=size)
    shape = _list(path, entry, "shape", what)
    if not all(_count(size) for size in shape):
        raise WorkloadError(path, f"{what}: shape must be a list of integers >= 0, got {shape!r}")
    return Tensor(tensor_id, tuple(shape), _text(path, entry, "dtype", what), kind)


def _op(path, number, entry):
    what = f"ops[{number}]"
    _check_keys(path, entry, _OP, what)
    name = _text(path, entry, "name", what)
    what = f"op {name!r}"
    durations = {}
    for key in _DURATIONS:
        value = entry.get(key)
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)):
            raise WorkloadError(path, f"{what}: {key} must be a number, got {value!r}")
        try:
            durations[key] = None if value is None else float(value)
        except OverflowError:
            raise WorkloadError(path, f"{what}: {key} {value} s is beyond any float") from None
    flops = entry.get("flops", 0)
    if not _count(flops):
        raise WorkloadError(path, f"{what}: flops must be an integer >= 0, got {flops!r}")
    lists = {}
    for key in ("inputs", "outputs", "deps"):
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise WorkloadError(path, f"{what}: {key} must be a list of names, got {value!r}")
        lists[key] = tuple(value)
    return Op(name, _text(path, entry, "kind", what), _text(path, entry, "phase", what),
              flops, lists["inputs"], lists["outputs"], lists["deps"],
              attrs=dict(_object(path, entry, "attrs", what)), **durations)


def load_workload(content, path="<workload>"):
    """The :class:`~host.graph.IterationGraph` of a workload file's content (a dict);
    :class:`WorkloadError` names ``path`` and the entry at fault."""
    _check_keys(path, content, _TOP, "the workload")
    if content.get("format") != FORMAT:
        raise WorkloadError(path, f"not a workload file (format {content.get('format')!r}, "
                                  f"expected {FORMAT!r})")
    version = content.get("version")
    if version != VERSION:
        raise WorkloadError(path, f"workload format version {version!r} is not supported "
                                  f"(this reader knows version {VERSION})")
    batch = _require(path, content, "batch", "the workload")
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        raise WorkloadError(path, f"batch must be an integer >= 1, got {batch!r}")
    top = "the workload"
    try:
        tensors = [_tensor(path, k, e) for k, e in enumerate(_list(path, content, "tensors", top))]
        ops = [_op(path, k, e) for k, e in enumerate(_list(path, content, "ops", top))]
        return IterationGraph(_text(path, content, "name", top), tensors, ops,
                              batch=batch, dtype=_text(path, content, "dtype", top, "fp32"),
                              meta=_object(path, content, "meta", top))
    except GraphError as error:
        raise WorkloadError(path, str(error)) from None


def write_workload(graph, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dump_workload(graph), indent=1) + "\n")
    return path


def read_workload(path):
    path = Path(path)
    try:
        content = json.loads(path.read_text())
    except OSError as error:
        raise WorkloadError(path, f"cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise WorkloadError(path, "not a UTF-8 text file") from None
    except json.JSONDecodeError as error:
        raise WorkloadError(path, f"not JSON: {error.msg}", line=error.lineno) from None
    except (ValueError, RecursionError) as error:     # a number too long, nesting too deep
        raise WorkloadError(path, f"not JSON: {error}") from None
    return load_workload(content, path)
