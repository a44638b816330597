"""The PyTorch profiler importer on a hand-written Chrome trace (and, where torch with CUDA
is installed, on one recorded from a small model)."""

import json

import pytest

from matndp.host.workload import WorkloadError, read_torch_trace


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
