"""A PyTorch profiler trace (Chrome trace JSON, ``prof.export_chrome_trace``) as a workload.

Ops are the GPU activities (``cat`` ``kernel``, ``gpu_memset``, ``gpu_memcpy``) in GPU
start order, each with its measured duration. Tensors come from the allocator's
``[memory]`` events (recorded with ``profile_memory=True``) on a CUDA device: an
allocation of N bytes at an address is a tensor, alive until the event that frees that
address. The trace does not say which kernel reads which tensor, so a tensor is attached
to the first kernel launched after its allocation (as an output) and to the last one
launched before it is freed (as an input): its lifetime and size are the trace's, its
accesses in between are not known. Launch times come from the runtime call with the
kernel's ``correlation`` id (else the kernel's own start). A tensor still allocated at the
end of the trace lives to the end; one that no kernel runs during is left out (counted in
``meta["untouched_allocations"]``). A kernel launched inside a CPU op whose name mentions
``backward`` is in the backward phase, inside ``Optimizer.step`` in the optimizer phase.
"""

import json
import math
from pathlib import Path

import numpy as np

from ..graph import GraphError, IterationGraph, Op, Tensor
from .errors import WorkloadError


__all__ = ["read_torch_trace"]

_GPU_CATEGORIES = ("kernel", "gpu_memset", "gpu_memcpy")
_CUDA_DEVICE_TYPE = 1


def _events(path):
    try:
        content = json.loads(Path(path).read_text())
    except OSError as error:
        raise WorkloadError(path, f"cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise WorkloadError(path, "not a UTF-8 text file") from None
    except json.JSONDecodeError as error:
        raise WorkloadError(path, f"not JSON: {error.msg}", line=error.lineno) from None
    except (ValueError, RecursionError) as error:     # a number too long, nesting too deep
        raise WorkloadError(path, f"not JSON: {error}") from None
    events = content.get("traceEvents") if isinstance(content, dict) else content
    if not isinstance(events, list):
        raise WorkloadError(path, "no traceEvents list: not a Chrome trace")
    return events


def _number(path, index, event, key):
    value = event.get(key)
    where = f"traceEvents[{index}] ({event.get('name')!r})"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise WorkloadError(path, f"{where}: {key} must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise WorkloadError(path, f"{where}: {key} must be finite, got {value!r}")
    return number


def _arguments(path, index, event):
    """The event's ``args`` (an object, or nothing), its ``correlation`` id an integer or a
    string where there is one."""
    args = event.get("args")
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise WorkloadError(path, f"traceEvents[{index}]: args must be an object, got {args!r}")
    if not isinstance(args.get("correlation", 0), (int, str)):
        raise WorkloadError(path, f"traceEvents[{index}]: args.correlation must be an integer, "
                                  f"got {args['correlation']!r}")
    return args


def read_torch_trace(path, *, batch=1, name=None):
    path = Path(path)
    events = _events(path)
    kernels, launches, cpu_ops, memory = [], {}, [], []
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            raise WorkloadError(path, f"traceEvents[{index}] is not an object")
        category = event.get("cat")
        args = _arguments(path, index, event)
        if category in _GPU_CATEGORIES and event.get("ph") == "X":
            kernels.append((_number(path, index, event, "ts"), _number(path, index, event, "dur"),
                            str(event.get("name")), category, args.get("correlation"), index))
        elif category == "cuda_runtime" and "correlation" in args:
            launches[args["correlation"]] = _number(path, index, event, "ts")
        elif category == "cpu_op" and event.get("ph") == "X":
            cpu_ops.append((_number(path, index, event, "ts"), _number(path, index, event, "dur"),
                            str(event.get("name"))))
        elif event.get("name") == "[memory]":
            if args.get("Device Type") != _CUDA_DEVICE_TYPE:
                continue
            for key in ("Addr", "Bytes"):
                if not isinstance(args.get(key), int) or isinstance(args.get(key), bool):
                    raise WorkloadError(path, f"traceEvents[{index}] ([memory]): args.{key} "
                                              f"must be an integer, got {args.get(key)!r}")
            memory.append((_number(path, index, event, "ts"), args["Addr"], args["Bytes"], index))
    if not kernels:
        raise WorkloadError(path, "no GPU kernels in the trace (was it recorded with CUDA "
                                  "activities?)")
    kernels.sort(key=lambda k: (k[0], k[5]))
    launch_ts = np.array([launches.get(k[4], k[0]) for k in kernels])
    order = np.argsort(launch_ts, kind="stable")
    sorted_launch = launch_ts[order]

    inputs = [[] for _ in kernels]
    outputs = [[] for _ in kernels]
    tensors, live, untouched = [], {}, 0

    def close(tensor_id, size, born_ts, died_ts):
        nonlocal untouched
        first = int(np.searchsorted(sorted_launch, born_ts, side="left"))
        last = int(np.searchsorted(sorted_launch, died_ts, side="right")) - 1
        if first > last:
            untouched += 1
            return
        outputs[int(order[first])].append(tensor_id)
        if last != first:
            inputs[int(order[last])].append(tensor_id)
        tensors.append(Tensor(tensor_id, (), "fp32", "activation", size_bytes=size))

    for ts, address, size, index in sorted(memory):
        if size > 0:
            if address in live:
                raise WorkloadError(path, f"traceEvents[{index}]: address {address:#x} allocated "
                                          "again before it was freed")
            live[address] = (f"alloc{index}", size, ts)
        elif size < 0:
            if address not in live:
                raise WorkloadError(path, f"traceEvents[{index}]: frees address {address:#x}, "
                                          "which the trace never allocated (a tensor referenced "
                                          "before its definition: start recording before it is "
                                          "allocated)")
            tensor_id, allocated, born = live.pop(address)
            if allocated != -size:
                raise WorkloadError(path, f"traceEvents[{index}]: frees {-size} bytes at "
                                          f"{address:#x}, {allocated} were allocated there")
            close(tensor_id, allocated, born, ts)
    for tensor_id, allocated, born in live.values():
        close(tensor_id, allocated, born, float("inf"))

    backward = [(s, s + d) for s, d, n in cpu_ops if "backward" in n.lower()]
    optimizer = [(s, s + d) for s, d, n in cpu_ops if n.startswith("Optimizer.step")]

    def phase(ts):
        if any(a <= ts <= b for a, b in optimizer):
            return "optimizer"
        if any(a <= ts <= b for a, b in backward):
            return "backward"
        return "forward"

    try:          # Op refuses a negative duration, IterationGraph a bad graph
        ops = [Op(f"{number}.{kernel_name[:80]}", category, phase(float(launch_ts[number])), 0,
                  tuple(dict.fromkeys(inputs[number])), tuple(dict.fromkeys(outputs[number])),
                  attrs={"kernel": kernel_name}, duration_s=dur / 1e6)
               for number, (ts, dur, kernel_name, category, _, _) in enumerate(kernels)]
        return IterationGraph(name or path.stem, tensors, ops, batch=batch, dtype="fp32",
                              meta={"source": "torch-profiler", "trace": str(path),
                                    "untouched_allocations": untouched})
    except GraphError as error:
        raise WorkloadError(path, str(error)) from None
