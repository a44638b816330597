"""The PyTorch profiler importer on a hand-written Chrome trace (and, where torch with CUDA
is installed, on one recorded from a small model)."""

import json

import pytest

from matndp.host.workload import WorkloadError, read_torch_trace

from .refusal import check_json_file_refusals, refused


def _kernel(name, ts, dur, correlation):
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur,
            "args": {"correlation": correlation}}


def _launch(ts, correlation):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts, "dur": 1,
            "args": {"correlation": correlation}}


def _memory(ts, address, size):
    return {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "ts": ts,
            "args": {"Addr": address, "Bytes": size, "Device Type": 1, "Device Id": 0}}


def _trace():
    """Three kernels launched at 10, 20, 30 us (run later on the GPU); A (4 KiB) is
    allocated before the first launch and freed after the third; B (8 KiB) lives across
    the second launch only; a host allocation and one no kernel runs during are ignored."""
    return {"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 5, "dur": 10},
        {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0",
         "ts": 25, "dur": 10},
        _memory(8, 0x1000, 4096),
        _launch(10, 1), _kernel("gemm_a", 100, 50, 1),
        _memory(15, 0x2000, 8192),
        _launch(20, 2), _kernel("relu", 150, 10, 2),
        _memory(22, 0x2000, -8192),
        _memory(23, 0x3000, 512), _memory(24, 0x3000, -512),
        _launch(30, 3), _kernel("gemm_b", 160, 40, 3),
        _memory(35, 0x1000, -4096),
        {"ph": "i", "name": "[memory]", "ts": 36,
         "args": {"Addr": 7, "Bytes": 64, "Device Type": 0, "Device Id": -1}},
    ]}


def _write(tmp_path, content):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(content))
    return path


def test_kernels_durations_and_lifetimes(tmp_path):
    graph = read_torch_trace(_write(tmp_path, _trace()), batch=4)
    assert [op.name for op in graph.ops] == ["0.gemm_a", "1.relu", "2.gemm_b"]
    assert [op.duration_s for op in graph.ops] == [50e-6, 10e-6, 40e-6]
    assert [op.phase for op in graph.ops] == ["forward", "forward", "backward"]
    sizes = {t.id: t.bytes for t in graph.tensors.values()}
    assert sorted(sizes.values()) == [4096, 8192]
    a = next(t for t, s in sizes.items() if s == 4096)
    b = next(t for t, s in sizes.items() if s == 8192)
    assert graph.ops[0].outputs == (a,) and graph.ops[2].inputs == (a,)
    assert graph.ops[1].outputs == (b,) and graph.ops[1].inputs == ()
    assert graph.meta["untouched_allocations"] == 1 and graph.batch == 4


def test_a_free_of_an_unknown_address_is_a_tensor_referenced_before_definition(tmp_path):
    content = _trace()
    content["traceEvents"].append(_memory(40, 0x9000, -64))
    with pytest.raises(WorkloadError, match=r"traceEvents\[15\]: frees address 0x9000, which "
                                            r"the trace never allocated"):
        read_torch_trace(_write(tmp_path, content))


def test_an_allocation_never_freed_lives_to_the_end(tmp_path):
    content = _trace()
    content["traceEvents"].append(_memory(28, 0x4000, 1024))      # before the third launch
    graph = read_torch_trace(_write(tmp_path, content))
    kept = next(t.id for t in graph.tensors.values() if t.bytes == 1024)
    assert kept in graph.ops[2].outputs and kept not in graph.ops[1].outputs


def test_an_address_allocated_twice_is_refused(tmp_path):
    content = _trace()
    content["traceEvents"].append(_memory(9, 0x1000, 64))
    with pytest.raises(WorkloadError, match=r"traceEvents\[15\]: address 0x1000 allocated again "
                                            r"before it was freed"):
        read_torch_trace(_write(tmp_path, content))


@pytest.mark.parametrize("event, message", [
    ({"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 1}, r"ts must be a number"),
    ({"ph": "i", "name": "[memory]", "ts": 1, "args": {"Addr": "x", "Bytes": 4, "Device Type": 1}},
     r"args.Addr must be an integer"),
    (["not", "an", "event"], r"traceEvents\[15\] is not an object"),
])
def test_malformed_events_are_named(tmp_path, event, message):
    content = _trace()
    content["traceEvents"].append(event)
    with pytest.raises(WorkloadError, match=message):
        read_torch_trace(_write(tmp_path, content))


def test_files_that_are_no_trace(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{\n\n oops")
    with pytest.raises(WorkloadError, match=r"bad.json:3: not JSON"):
        read_torch_trace(path)
    with pytest.raises(WorkloadError, match="no GPU kernels"):
        read_torch_trace(_write(tmp_path, {"traceEvents": []}))
    with pytest.raises(WorkloadError, match="no traceEvents list"):
        read_torch_trace(_write(tmp_path, {"events": []}))


def test_a_trace_recorded_from_a_small_model(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("recording GPU kernels needs CUDA")
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.randn(16, 64, device="cuda")
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, profile_memory=True) as profiler:
        loss = model(data).square().mean()
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
    path = tmp_path / "step.json"
    profiler.export_chrome_trace(str(path))
    graph = read_torch_trace(path, batch=16)
    assert len(graph.ops) >= 6 and all(op.duration_s > 0 for op in graph.ops)
    assert {op.phase for op in graph.ops} >= {"forward", "backward"}
    assert graph.tensors



@pytest.mark.parametrize("event, message", [
    ({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": None},
     "traceEvents[15] ('k'): dur must be a number, got None"),
    ({"ph": "X", "cat": "gpu_memcpy", "name": "copy", "ts": True, "dur": 1},
     "traceEvents[15] ('copy'): ts must be a number, got True"),
    ({"ph": "X", "cat": "gpu_memset", "ts": 10 ** 400, "dur": 1},
     f"traceEvents[15] (None): ts must be finite, got {10 ** 400}"),
    ({"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1, "dur": "long"},
     "traceEvents[15] ('aten::add'): dur must be a number, got 'long'"),
    ({"ph": "X", "cat": "cpu_op", "name": "aten::add", "dur": 1},
     "traceEvents[15] ('aten::add'): ts must be a number, got None"),
    ({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": float("nan"),
      "args": {"correlation": 9}},
     "traceEvents[15] ('cudaLaunchKernel'): ts must be finite, got nan"),
    ({"ph": "i", "name": "[memory]", "ts": "t", "args": {"Addr": 1, "Bytes": 4, "Device Type": 1}},
     "traceEvents[15] ('[memory]'): ts must be a number, got 't'"),
    ({"ph": "i", "name": "[memory]", "ts": 1, "args": {"Addr": 1, "Bytes": 4.0, "Device Type": 1}},
     "traceEvents[15] ([memory]): args.Bytes must be an integer, got 4.0"),
    ({"ph": "i", "name": "[memory]", "ts": 1, "args": {"Addr": False, "Bytes": 4, "Device Type": 1}},
     "traceEvents[15] ([memory]): args.Addr must be an integer, got False"),
    ({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": [1]},
     "traceEvents[15]: args must be an object, got [1]"),
    ({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"correlation": 1.5}},
     "traceEvents[15]: args.correlation must be an integer, got 1.5"),
    ("kernel", "traceEvents[15] is not an object"),
    (_memory(40, 0x1000, -4096), "traceEvents[15]: frees address 0x1000, which the trace never "
                                 "allocated (a tensor referenced before its definition: start "
                                 "recording before it is allocated)"),
    (_memory(34, 0x1000, -4095), "traceEvents[15]: frees 4095 bytes at 0x1000, 4096 were "
                                 "allocated there"),
    (_memory(9, 0x1000, 64), "traceEvents[15]: address 0x1000 allocated again before it was freed"),
    ({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2}, "op '0.k': bad duration "
                                                                    "-2e-06 s"),
])
def test_every_refusal_of_an_event_names_its_index_and_field(tmp_path, event, message):
    content = _trace()
    content["traceEvents"].append(event)
    path = _write(tmp_path, content)
    with refused(path, message):
        read_torch_trace(path)


def test_every_refusal_of_a_file_that_is_no_trace_names_the_file(tmp_path):
    path = tmp_path / "trace.json"
    check_json_file_refusals(read_torch_trace, path)
    for content in ({"traceEvents": {}}, "trace", 3):
        with refused(path, "no traceEvents list: not a Chrome trace"):
            read_torch_trace(_write(tmp_path, content))
    events = [_launch(1, 1), {"ph": "i", "cat": "kernel", "name": "k", "ts": 2}]
    with refused(path, "no GPU kernels in the trace (was it recorded with CUDA activities?)"):
        read_torch_trace(_write(tmp_path, events))


def test_a_bare_event_list_is_a_trace_and_the_optimizer_step_its_last_phase(tmp_path):
    """Kernels launched inside Optimizer.step are the optimizer's even where a backward op
    encloses them too; a kernel without a launch event is launched at its own start."""
    events = [{"ph": "X", "cat": "cpu_op", "name": "MulBackward0", "ts": 0, "dur": 100},
              {"ph": "X", "cat": "cpu_op", "name": "Optimizer.step#SGD.step", "ts": 50, "dur": 10},
              _launch(55, 7), _kernel("update", 300, 2, 7),
              {"ph": "X", "cat": "gpu_memcpy", "name": "copy", "ts": 200, "dur": 4},
              _kernel("late", 99, 3, 8)]
    graph = read_torch_trace(_write(tmp_path, events), name="step")
    assert [(op.name, op.kind, op.phase) for op in graph.ops] == [
        ("0.late", "kernel", "backward"), ("1.copy", "gpu_memcpy", "forward"),
        ("2.update", "kernel", "optimizer")]
    assert graph.name == "step" and graph.meta["trace"] == str(tmp_path / "trace.json")
