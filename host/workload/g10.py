"""G10's traces (platformxlab/G10, MICRO 2023) as a workload.

G10's front end writes ``statistics/kernels.config``: one block per kernel of the training
iteration, in execution order::

    Kernel ID: 4, Name: Conv2d_Forward
    Parent Layer ID:3; Name:Conv2d
    Execution Time: 16564224
    (512,32,149,149)
    Input Tensors:
    tensor21 Is weight (global)?: 1, Size in byte: 36864, Range:16384--53248
    Output Tensors:
    tensor20 Is weight (global)?: 0, Size in byte: 1416167424, Range:9828384768--11244552192
    ____________________________________________________________________

and its profiles give every kernel's measured time, ``results/<Model>/cudnn<B>.txt``, one
``<kernel id> <time> ms`` line per kernel. Global tensors (weights) persist across
iterations; every other tensor lives from its first to its last use, as in G10. The
iteration's ideal time is the sum of the kernel times, as G10 computes it.

A directory with a ``tensors.config`` too (G10 writes it beside ``kernels.config``) has its
tensors defined there; a kernel naming a tensor it does not define is then an error.

Beside the kernel times G10 keeps, per kernel, its measured time when its pages fault
(``cudnn<B>PF.txt``: every input and output page faults; ``cudnn<B>InputPF.txt``: the inputs
are resident and only the outputs fault, as G10's performance model reads it) and the
cuDNN workspace it allocates (``cudnn<B>Workspace.txt``, ``<kernel id> <bytes> B``). When
they are there the ops carry the fault-laden times (``fault_duration_s``,
``output_fault_duration_s``) and every non-empty workspace becomes a tensor of kind
``workspace``, written by its kernel alone, as G10's simulator adds it to the kernel's
outputs. The two fault files come together or not at all.
"""

import math
import re
from pathlib import Path

from ..graph import GraphError, IterationGraph, Op, Tensor
from .errors import WorkloadError


__all__ = ["read_g10", "kernel_times_ms", "workspace_bytes", "g10_times_file"]

# Numbers that become ints have at most 18 digits: Python refuses to convert much longer
# digit strings, and no count or size of a trace comes near 10**18.
_KERNEL = re.compile(r"Kernel ID: (\d{1,18}), Name: (\S+)$")
_PARENT = re.compile(r"Parent (?:Layer|OP) ID: ?\d+; Name: ?(\S*)$")
_TIME = re.compile(r"Execution Time: (\d+)$")
_SHAPE = re.compile(r"\(([\d,\s]+)\)$")
_TENSOR = re.compile(r"(tensor\d+) Is weight \(global\)\?: ([01]), Size in byte: (\d{1,18}), "
                     r"Range:(\d+)--(\d+)$")
_SEPARATOR = re.compile(r"_{10,}$")
_TIME_LINE = re.compile(r"(\d{1,18}) ([0-9.]+(?:[eE][+-]?\d+)?) ms$")
_TIMES_NAME = re.compile(r"cudnn(\d+)\.txt$")
_WORKSPACE_LINE = re.compile(r"(\d{1,18}) (\d{1,18}) B$")


def _numbered(path, pattern, expected, what, convert):
    """The second field, through ``convert``, of every ``<kernel id> <value> ...`` line of
    ``path``, checked to be numbered 0, 1, ..."""
    path = Path(path)
    values = []
    for number, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            continue
        match = pattern.fullmatch(line.strip())
        value = None if match is None else convert(match[2])
        if value is None:
            raise WorkloadError(path, f"expected {expected!r}, got {line.strip()!r}", line=number)
        if int(match[1]) != len(values):
            raise WorkloadError(path, f"kernel {match[1]} where kernel {len(values)} was expected",
                                line=number)
        values.append(value)
    if not values:
        raise WorkloadError(path, f"no {what}")
    return values


def _milliseconds(text):
    """A time's finite value, or None (the pattern lets "1.2.3" through)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def kernel_times_ms(path):
    """Measured kernel times of a ``cudnn<B>.txt``, in ms, checked to be numbered 0, 1, ..."""
    return _numbered(path, _TIME_LINE, "<kernel id> <time> ms", "kernel times", _milliseconds)


def workspace_bytes(path):
    """Workspace bytes per kernel of a ``cudnn<B>Workspace.txt``, numbered 0, 1, ..."""
    return _numbered(path, _WORKSPACE_LINE, "<kernel id> <bytes> B", "workspace sizes", int)


def _per_kernel(path, values, kernels, kernels_path, what):
    if len(values) != kernels:
        raise WorkloadError(path, f"{len(values)} {what} for the {kernels} kernels of "
                                  f"{kernels_path}")
    return values


def _fault_files(times_path, kernels, kernels_path):
    """(all-fault times, output-fault times) in ms beside ``times_path``, or (None, None)."""
    stem = times_path.with_suffix("")
    every = stem.with_name(stem.name + "PF.txt")
    outputs = stem.with_name(stem.name + "InputPF.txt")
    if not every.is_file() and not outputs.is_file():
        return None, None
    for present, absent in ((every, outputs), (outputs, every)):
        if present.is_file() and not absent.is_file():
            raise WorkloadError(absent, f"missing: {present.name} is there, and G10's fault "
                                        "model needs both fault-laden kernel times")
    return (_per_kernel(every, kernel_times_ms(every), kernels, kernels_path,
                        "fault-laden kernel times"),
            _per_kernel(outputs, kernel_times_ms(outputs), kernels, kernels_path,
                        "fault-laden kernel times"))


def _read_lines(path):
    try:
        return Path(path).read_text().splitlines()
    except OSError as error:
        raise WorkloadError(path, f"cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise WorkloadError(path, "not a UTF-8 text file") from None


def _parse_tensor_line(path, number, line):
    match = _TENSOR.fullmatch(line.strip())
    if match is None:
        raise WorkloadError(path, f"malformed tensor line {line.strip()!r}", line=number)
    return match[1], match[2] == "1", int(match[3])


class _Tensors:
    """Tensor definitions, each checked against every later mention."""

    def __init__(self, closed):
        self.closed = closed          # defined by tensors.config: nothing new may appear
        self.defined = {}

    def mention(self, path, number, tensor_id, is_global, size):
        known = self.defined.get(tensor_id)
        if known is None:
            if self.closed:
                raise WorkloadError(path, f"{tensor_id} is referenced before its definition "
                                               "(tensors.config does not define it)", line=number)
            self.defined[tensor_id] = (is_global, size)
        elif known != (is_global, size):
            raise WorkloadError(path, f"{tensor_id} is given as global={int(is_global)}, "
                                           f"{size} bytes; it was defined as global="
                                           f"{int(known[0])}, {known[1]} bytes", line=number)


def _read_tensors_config(path):
    tensors = _Tensors(closed=False)
    for number, line in enumerate(_read_lines(path), start=1):
        if line.strip():
            tensors.mention(path, number, *_parse_tensor_line(path, number, line))
    tensors.closed = True
    return tensors


def _parse_kernels(path, tensors):
    """[(kernel id, name, parent name, [input ids], [output ids])] of a kernels.config."""
    kernels = []
    current = None
    section = None
    for number, raw in enumerate(_read_lines(path), start=1):
        line = raw.strip()
        if not line:
            continue
        if _SEPARATOR.fullmatch(line):
            current = section = None
            continue
        match = _KERNEL.fullmatch(line)
        if match is not None:
            if int(match[1]) != len(kernels):
                raise WorkloadError(path, f"kernel {match[1]} where kernel {len(kernels)} was "
                                          "expected", line=number)
            current = [int(match[1]), match[2], "", [], []]
            kernels.append(current)
            section = None
            continue
        if current is None:
            raise WorkloadError(path, f"expected 'Kernel ID: <n>, Name: <name>', got {line!r}",
                                line=number)
        if line == "Input Tensors:":
            section = current[3]
        elif line == "Output Tensors:":
            section = current[4]
        elif section is not None:
            tensor_id, is_global, size = _parse_tensor_line(path, number, line)
            tensors.mention(path, number, tensor_id, is_global, size)
            section.append(tensor_id)
        elif (match := _PARENT.fullmatch(line)) is not None:
            current[2] = match[1]
        elif not (_TIME.fullmatch(line) or _SHAPE.fullmatch(line)):
            raise WorkloadError(path, f"unexpected line {line!r} in kernel {current[0]}",
                                line=number)
    if not kernels:
        raise WorkloadError(path, "no kernels")
    return kernels


def _phase(name):
    if "Apply_Grad" in name:
        return "optimizer"
    if "Backward" in name or "makeLoss" in name or "MultiGredient" in name:
        return "backward"
    return "forward"


def g10_times_file(directory, batch=None):
    """The ``cudnn<B>.txt`` of ``directory`` (the one there is, or that of ``batch``)."""
    directory = Path(directory)
    found = {int(m[1]): p for p in sorted(directory.glob("cudnn*.txt"))
             if (m := _TIMES_NAME.search(p.name))}
    if batch is not None:
        if batch not in found:
            raise WorkloadError(directory, f"no cudnn{batch}.txt (kernel times of batch {batch})")
        return found[batch], batch
    if len(found) != 1:
        listed = ", ".join(p.name for p in found.values()) or "none"
        raise WorkloadError(directory, "need exactly one cudnn<B>.txt with the kernel times "
                                       f"(found: {listed}); name the batch to choose one")
    (batch, path), = found.items()
    return path, batch


def read_g10(directory, *, batch=None, kernels=None, times=None, name=None):
    """The workload of a G10 trace directory: ``kernels.config`` (or ``kernels``) and the
    kernel times ``cudnn<B>.txt`` (or ``times``, whose batch is ``batch``)."""
    directory = Path(directory)
    if not directory.is_dir() and (kernels is None or times is None):
        raise WorkloadError(directory, "no such G10 trace directory")
    kernels_path = Path(kernels) if kernels is not None else directory / "kernels.config"
    if not kernels_path.is_file():
        raise WorkloadError(kernels_path, "missing: G10's front end writes it to "
                                          "results/<Model>/<run>/statistics/kernels.config")
    if times is None:
        times_path, batch = g10_times_file(directory, batch)
    else:
        times_path = Path(times)
        if batch is None:
            match = _TIMES_NAME.search(times_path.name)
            if match is None:
                raise WorkloadError(times_path, "name the batch (the file is not cudnn<B>.txt)")
            batch = int(match[1])
    tensors_path = kernels_path.with_name("tensors.config")
    tensors = _read_tensors_config(tensors_path) if tensors_path.is_file() else \
        _Tensors(closed=False)
    kernels = _parse_kernels(kernels_path, tensors)
    times_ms = kernel_times_ms(times_path)
    if len(times_ms) != len(kernels):
        raise WorkloadError(times_path, f"{len(times_ms)} kernel times for the {len(kernels)} "
                                        f"kernels of {kernels_path}")
    every_ms, outputs_ms = _fault_files(times_path, len(kernels), kernels_path)
    workspace_path = times_path.with_suffix("").with_name(times_path.stem + "Workspace.txt")
    workspaces = (_per_kernel(workspace_path, workspace_bytes(workspace_path), len(kernels),
                              kernels_path, "workspace sizes")
                  if workspace_path.is_file() else [0] * len(kernels))
    used = set()
    written = set()
    kinds = {}
    ops = []
    workspace_tensors = []
    for kernel, ms in zip(kernels, times_ms):
        kernel_id, kernel_name, parent, inputs, outputs = kernel
        if workspaces[kernel_id]:
            workspace_id = f"workspace{kernel_id}"
            if workspace_id in tensors.defined:
                raise WorkloadError(kernels_path, f"a tensor is named {workspace_id}, the name "
                                                  f"of kernel {kernel_id}'s workspace")
            workspace_tensors.append(Tensor(workspace_id, (), "fp32", "workspace",
                                            size_bytes=workspaces[kernel_id]))
            outputs = [*outputs, workspace_id]
            used.add(workspace_id)
            written.add(workspace_id)
        phase = _phase(kernel_name)
        for tensor_id in inputs:
            if tensor_id not in used:
                kinds[tensor_id] = "input"
        for tensor_id in outputs:
            if tensor_id not in used and tensor_id not in written:
                kinds[tensor_id] = "activation" if phase == "forward" else "gradient"
            written.add(tensor_id)
        used.update(inputs)
        used.update(outputs)
        ops.append(Op(f"{kernel_id}.{kernel_name}", kernel_name.lower(), phase, 0,
                      tuple(dict.fromkeys(inputs)), tuple(dict.fromkeys(outputs)),
                      attrs={"g10_kernel": kernel_id, "layer": parent},
                      duration_s=ms * 1e-3,
                      fault_duration_s=None if every_ms is None else every_ms[kernel_id] * 1e-3,
                      output_fault_duration_s=None if outputs_ms is None
                      else outputs_ms[kernel_id] * 1e-3))
    graph_tensors = [Tensor(tensor_id, (), "fp32", "weight" if is_global else kinds[tensor_id],
                            size_bytes=size)
                     for tensor_id, (is_global, size) in tensors.defined.items()
                     if tensor_id in used] + workspace_tensors
    meta = {"source": "g10", "kernels": str(kernels_path), "times": str(times_path)}
    if every_ms is not None:
        meta["fault_times"] = [str(times_path.with_name(times_path.stem + suffix))
                               for suffix in ("PF.txt", "InputPF.txt")]
    if workspace_path.is_file():
        meta["workspaces"] = str(workspace_path)
    try:
        return IterationGraph(name or directory.name, graph_tensors, ops, batch=batch,
                              dtype="fp32", meta=meta)
    except GraphError as error:
        raise WorkloadError(kernels_path, str(error)) from None
