"""The G10 importer on a hand-written five-kernel trace in G10's format, and on broken
copies of it."""

import shutil
from pathlib import Path

import pytest

from matndp.host.workload import WorkloadError, read_g10, read_trace

from .refusal import refused


FIXTURE = Path(__file__).parent / "fixtures" / "g10"


@pytest.fixture
def trace_dir(tmp_path):
    target = tmp_path / "small"
    shutil.copytree(FIXTURE, target)
    return target


def test_kernels_tensors_and_times_are_read():
    graph = read_g10(FIXTURE)
    assert graph.batch == 4
    assert [op.name for op in graph.ops] == ["0.LoadData_A0", "1.Linear_Forward", "2.makeLoss",
                                             "3.Linear_Backward_Weight",
                                             "4.Linear_Apply_Grad_Weight"]
    assert [op.phase for op in graph.ops] == ["forward", "forward", "backward", "backward",
                                              "optimizer"]
    assert [op.duration_s for op in graph.ops] == [0.5e-3, 1.25e-3, 0.125e-3, 2e-3, 0.0625e-3]
    sizes = {t.id: (t.bytes, t.kind) for t in graph.tensors.values()}
    assert sizes == {"tensor0": (16384, "activation"), "tensor1": (8192, "weight"),
                     "tensor2": (12288, "activation"), "tensor3": (12000, "gradient"),
                     "tensor4": (8192, "gradient")}
    assert graph.op("4.Linear_Apply_Grad_Weight").inputs == ("tensor4", "tensor1")
    assert graph.op("4.Linear_Apply_Grad_Weight").outputs == ("tensor1",)
    assert graph.op("0.LoadData_A0").inputs == ()
    assert graph.meta == {"source": "g10", "kernels": str(FIXTURE / "kernels.config"),
                          "times": str(FIXTURE / "cudnn4.txt")}


def test_the_trace_specification_names_the_reader():
    assert len(read_trace(f"g10:{FIXTURE}").ops) == 5
    with pytest.raises(ValueError, match="unknown trace format 'g11'"):
        read_trace(f"g11:{FIXTURE}")
    with pytest.raises(ValueError, match="give FORMAT:PATH"):
        read_trace(str(FIXTURE))


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_a_malformed_tensor_line_names_file_and_line(trace_dir):
    _edit(trace_dir / "kernels.config", "Size in byte: 12288, Range:16384--28672",
          "Size in byte: twelve, Range:16384--28672")
    with pytest.raises(WorkloadError, match=r"kernels.config:17: malformed tensor line"):
        read_g10(trace_dir)


def test_an_unexpected_line_names_file_and_line(trace_dir):
    _edit(trace_dir / "kernels.config", "Execution Time: 150000\n", "Executed at: noon\n")
    with pytest.raises(WorkloadError, match=r"kernels.config:21: unexpected line 'Executed at: noon'"):
        read_g10(trace_dir)


def test_kernels_out_of_order_are_refused(trace_dir):
    _edit(trace_dir / "kernels.config", "Kernel ID: 2,", "Kernel ID: 3,")
    with pytest.raises(WorkloadError, match=r"kernels.config:19: kernel 3 where kernel 2 was expected"):
        read_g10(trace_dir)


def test_a_tensor_with_two_sizes_is_refused(trace_dir):
    _edit(trace_dir / "kernels.config",
          "Input Tensors:\ntensor2 Is weight (global)?: 0, Size in byte: 12288",
          "Input Tensors:\ntensor2 Is weight (global)?: 0, Size in byte: 12289")
    with pytest.raises(WorkloadError, match=r"kernels.config:24: tensor2 is given as global=0, "
                                            r"12289 bytes; it was defined as global=0, 12288"):
        read_g10(trace_dir)


def test_a_tensor_referenced_before_its_definition_is_refused(trace_dir):
    # tensors.config defines every tensor but tensor3
    (trace_dir / "tensors.config").write_text(
        "tensor0 Is weight (global)?: 0, Size in byte: 16384, Range:0--16384\n"
        "tensor1 Is weight (global)?: 1, Size in byte: 8192, Range:0--8192\n"
        "tensor2 Is weight (global)?: 0, Size in byte: 12288, Range:16384--28672\n"
        "tensor4 Is weight (global)?: 0, Size in byte: 8192, Range:40960--49152\n")
    with pytest.raises(WorkloadError, match=r"kernels.config:26: tensor3 is referenced before "
                                            r"its definition"):
        read_g10(trace_dir)


def test_a_malformed_time_line_names_file_and_line(trace_dir):
    _edit(trace_dir / "cudnn4.txt", "0002 0.125000 ms", "0002 0.125000 s")
    with pytest.raises(WorkloadError, match=r"cudnn4.txt:3: expected '<kernel id> <time> ms'"):
        read_g10(trace_dir)


def test_times_for_another_kernel_count_are_refused(trace_dir):
    (trace_dir / "cudnn4.txt").write_text("0000 0.5 ms\n0001 1.25 ms\n")
    with pytest.raises(WorkloadError, match=r"cudnn4.txt: 2 kernel times for the 5 kernels"):
        read_g10(trace_dir)


def test_missing_and_ambiguous_files_are_named(trace_dir, tmp_path):
    with pytest.raises(WorkloadError, match="no such G10 trace directory"):
        read_g10(tmp_path / "absent")
    shutil.copy(trace_dir / "cudnn4.txt", trace_dir / "cudnn8.txt")
    with pytest.raises(WorkloadError, match=r"found: cudnn4.txt, cudnn8.txt"):
        read_g10(trace_dir)
    assert read_g10(trace_dir, batch=8).batch == 8
    with pytest.raises(WorkloadError, match=r"no cudnn16.txt"):
        read_g10(trace_dir, batch=16)
    (trace_dir / "kernels.config").unlink()
    with pytest.raises(WorkloadError, match=r"kernels.config: missing"):
        read_g10(trace_dir, batch=4)


def _fault_files(directory, every=(2.0, 5.0, 0.5, 8.0, 0.25), outputs=(1.0, 2.5, 0.25, 4.0, 0.125),
                 workspace=(0, 8192, 0, 0, 0)):
    (directory / "cudnn4PF.txt").write_text("".join(f"{k:04d} {t:.6f} ms\n" for k, t in enumerate(every)))
    (directory / "cudnn4InputPF.txt").write_text("".join(f"{k:04d} {t:.6f} ms\n"
                                                         for k, t in enumerate(outputs)))
    (directory / "cudnn4Workspace.txt").write_text("".join(f"{k:04d} {b} B\n"
                                                           for k, b in enumerate(workspace)))


def test_fault_laden_times_and_workspaces_are_read(trace_dir):
    _fault_files(trace_dir)
    graph = read_g10(trace_dir)
    assert [op.fault_duration_s for op in graph.ops] == [2e-3, 5e-3, 0.5e-3, 8e-3, 0.25e-3]
    assert [op.output_fault_duration_s for op in graph.ops] == [1e-3, 2.5e-3, 0.25e-3, 4e-3,
                                                               0.125e-3]
    # kernel 1's 8 KiB workspace: a tensor of its own, written by kernel 1 alone
    assert graph.tensors["workspace1"].bytes == 8192
    assert graph.tensors["workspace1"].kind == "workspace"
    assert graph.op("1.Linear_Forward").outputs == ("tensor2", "workspace1")
    assert [op for op in graph.ops if "workspace1" in (*op.inputs, *op.outputs)] == \
        [graph.op("1.Linear_Forward")]


def test_the_workload_format_keeps_the_fault_laden_times(trace_dir, tmp_path):
    from matndp.host.workload import read_workload, write_workload
    _fault_files(trace_dir)
    graph = read_g10(trace_dir)
    again = read_workload(write_workload(graph, tmp_path / "w.json"))
    assert [(op.fault_duration_s, op.output_fault_duration_s) for op in again.ops] == \
        [(op.fault_duration_s, op.output_fault_duration_s) for op in graph.ops]


def test_one_fault_file_without_the_other_is_refused(trace_dir):
    _fault_files(trace_dir)
    (trace_dir / "cudnn4InputPF.txt").unlink()
    with pytest.raises(WorkloadError, match=r"cudnn4InputPF.txt: missing: cudnn4PF.txt is there"):
        read_g10(trace_dir)


def test_malformed_fault_and_workspace_files_name_file_and_line(trace_dir):
    _fault_files(trace_dir)
    _edit(trace_dir / "cudnn4PF.txt", "0002 0.500000 ms", "0002 half ms")
    with pytest.raises(WorkloadError, match=r"cudnn4PF.txt:3: expected '<kernel id> <time> ms'"):
        read_g10(trace_dir)
    _fault_files(trace_dir)
    _edit(trace_dir / "cudnn4Workspace.txt", "0001 8192 B", "0001 8192 KB")
    with pytest.raises(WorkloadError, match=r"cudnn4Workspace.txt:2: expected '<kernel id> <bytes> B'"):
        read_g10(trace_dir)
    _fault_files(trace_dir, workspace=(0, 0, 0, 0))
    with pytest.raises(WorkloadError, match=r"cudnn4Workspace.txt: 4 workspace sizes for the 5 "):
        read_g10(trace_dir)



def _times(values):
    return "".join(f"{k:04d} {t} ms\n" for k, t in enumerate(values))


def test_every_refusal_of_a_times_file_names_file_line_and_what(trace_dir):
    times = trace_dir / "cudnn4.txt"
    times.write_text("0000 0.5 ms\n\n0002 1.0 ms\n")
    with refused(times, "kernel 0002 where kernel 1 was expected", line=3):
        read_g10(trace_dir)
    times.write_text("0000 0.5 ms\n0001 1.2.3 ms\n")
    with refused(times, "expected '<kernel id> <time> ms', got '0001 1.2.3 ms'", line=2):
        read_g10(trace_dir)
    times.write_text("0000 1e999 ms\n")
    with refused(times, "expected '<kernel id> <time> ms', got '0000 1e999 ms'", line=1):
        read_g10(trace_dir)
    times.write_text("\n  \n")
    with refused(times, "no kernel times"):
        read_g10(trace_dir)
    times.write_bytes(b"0000 0.5 ms\n\xfe\n")
    with refused(times, "not a UTF-8 text file"):
        read_g10(trace_dir)
    absent = trace_dir / "cudnn9.txt"
    with refused(absent, "cannot read: No such file or directory"):
        read_g10(trace_dir, times=absent, batch=9)
    with refused(trace_dir / "times.txt", "name the batch (the file is not cudnn<B>.txt)"):
        read_g10(trace_dir, times=trace_dir / "times.txt")


def test_times_given_by_path_take_the_batch_from_the_name(trace_dir, tmp_path):
    times = tmp_path / "cudnn32.txt"
    times.write_text(_times([1, 2, 3, 4, 5]))
    graph = read_g10(trace_dir, times=times)
    assert graph.batch == 32
    assert [op.duration_s for op in graph.ops] == [1e-3, 2e-3, 3e-3, 4e-3, 5e-3]
    assert read_g10(trace_dir, times=times, batch=7).batch == 7


def test_every_refusal_of_the_fault_and_workspace_files_names_the_file(trace_dir):
    kernels = trace_dir / "kernels.config"
    _fault_files(trace_dir, every=(1, 2, 3, 4))
    with refused(trace_dir / "cudnn4PF.txt",
                  f"4 fault-laden kernel times for the 5 kernels of {kernels}"):
        read_g10(trace_dir)
    _fault_files(trace_dir, outputs=(1, 2, 3, 4, 5, 6))
    with refused(trace_dir / "cudnn4InputPF.txt",
                  f"6 fault-laden kernel times for the 5 kernels of {kernels}"):
        read_g10(trace_dir)
    _fault_files(trace_dir)
    (trace_dir / "cudnn4PF.txt").unlink()
    with refused(trace_dir / "cudnn4PF.txt", "missing: cudnn4InputPF.txt is there, and G10's "
                                              "fault model needs both fault-laden kernel times"):
        read_g10(trace_dir)
    _fault_files(trace_dir)
    (trace_dir / "cudnn4Workspace.txt").write_text("")
    with refused(trace_dir / "cudnn4Workspace.txt", "no workspace sizes"):
        read_g10(trace_dir)
    _fault_files(trace_dir, workspace=(0, 0, 0, 0, 0, 0))
    with refused(trace_dir / "cudnn4Workspace.txt",
                  f"6 workspace sizes for the 5 kernels of {kernels}"):
        read_g10(trace_dir)


def test_every_refusal_of_kernels_config_names_file_and_line(trace_dir):
    kernels = trace_dir / "kernels.config"
    text = kernels.read_text()
    kernels.write_text("\nParent Layer ID:0; Name:Linear\n" + text)
    with refused(kernels, "expected 'Kernel ID: <n>, Name: <name>', got "
                           "'Parent Layer ID:0; Name:Linear'", line=2):
        read_g10(trace_dir)
    kernels.write_text("\n" + "_" * 20 + "\n")
    with refused(kernels, "no kernels"):
        read_g10(trace_dir)
    kernels.write_text(text.replace("Kernel ID: 0,", "Kernel ID: 1,", 1))
    with refused(kernels, "kernel 1 where kernel 0 was expected", line=1):
        read_g10(trace_dir)
    # a separator ends the kernel: the next tensor line belongs to no section
    kernels.write_text(text.replace("Output Tensors:\ntensor2", "Output Tensors:\n" + "_" * 12
                                    + "\ntensor2", 1))
    with refused(kernels, "expected 'Kernel ID: <n>, Name: <name>', got "
                           "'tensor2 Is weight (global)?: 0, Size in byte: 12288, "
                           "Range:16384--28672'", line=18):
        read_g10(trace_dir)
    kernels.write_text(text.replace("tensor1 Is weight (global)?: 1, Size in byte: 8192",
                                    "tensor1 Is weight (global)?: 0, Size in byte: 8192", 1))
    with refused(kernels, "tensor1 is given as global=1, 8192 bytes; it was defined as "
                           "global=0, 8192 bytes", line=44):
        read_g10(trace_dir)
    kernels.write_text(text)
    (trace_dir / "tensors.config").write_text("tensor0 Is weight (global)?: 0, Size in byte: "
                                              "16384, Range:0--16384\n\ntensor1 is a weight\n")
    with refused(trace_dir / "tensors.config", "malformed tensor line 'tensor1 is a weight'",
                  line=3):
        read_g10(trace_dir)
    (trace_dir / "tensors.config").write_text("tensor0 Is weight (global)?: 0, Size in byte: "
                                              "16384, Range:0--16384\n")
    with refused(kernels, "tensor1 is referenced before its definition (tensors.config does "
                           "not define it)", line=14):
        read_g10(trace_dir)


def test_a_tensor_line_naming_a_workspace_is_malformed(trace_dir):
    kernels = trace_dir / "kernels.config"
    kernels.write_text(kernels.read_text().replace("tensor2", "workspace1"))
    _fault_files(trace_dir)
    # the pattern of a tensor line only knows tensor<n>: the renamed line is malformed
    with refused(kernels, "malformed tensor line 'workspace1 Is weight (global)?: 0, Size in "
                           "byte: 12288, Range:16384--28672'", line=17):
        read_g10(trace_dir)


def test_missing_directories_and_files_are_refused_by_their_whole_message(trace_dir, tmp_path):
    with refused(tmp_path / "absent", "no such G10 trace directory"):
        read_g10(tmp_path / "absent")
    with refused(trace_dir, "no cudnn16.txt (kernel times of batch 16)"):
        read_g10(trace_dir, batch=16)
    (trace_dir / "cudnn4.txt").rename(trace_dir / "times4.txt")
    with refused(trace_dir, "need exactly one cudnn<B>.txt with the kernel times (found: none); "
                             "name the batch to choose one"):
        read_g10(trace_dir)
    (trace_dir / "kernels.config").unlink()
    with refused(trace_dir / "kernels.config", "missing: G10's front end writes it to "
                                                "results/<Model>/<run>/statistics/kernels.config"):
        read_g10(trace_dir, batch=4)
    with refused(trace_dir / "cudnn4.txt",
                  f"2 kernel times for the 5 kernels of {FIXTURE / 'kernels.config'}"):
        (trace_dir / "cudnn4.txt").write_text(_times([1, 2]))
        read_g10(tmp_path / "absent", kernels=FIXTURE / "kernels.config",
                 times=trace_dir / "cudnn4.txt")


def test_the_fault_and_workspace_files_are_those_named_after_the_times_file(trace_dir, tmp_path):
    """Beside times given by path, cudnn32.txt: cudnn32PF.txt, cudnn32InputPF.txt and
    cudnn32Workspace.txt; the trace directory's files of batch 4 belong to cudnn4.txt."""
    _fault_files(trace_dir, every=(9.0,) * 5, outputs=(9.0,) * 5, workspace=(0, 0, 0, 0, 64))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    times = elsewhere / "cudnn32.txt"
    times.write_text(_times([1, 2, 3, 4, 5]))
    plain = read_g10(trace_dir, times=times)
    assert [op.fault_duration_s for op in plain.ops] == [None] * 5
    assert not any(tensor.kind == "workspace" for tensor in plain.tensors.values())
    (elsewhere / "cudnn32PF.txt").write_text(_times([2, 4, 6, 8, 10]))
    (elsewhere / "cudnn32InputPF.txt").write_text(_times([1.5, 3, 4.25, 6, 7.5]))
    (elsewhere / "cudnn32Workspace.txt").write_text("0000 0 B\n0001 0 B\n0002 4096 B\n0003 0 B\n0004 0 B\n")
    graph = read_g10(trace_dir, times=times)
    assert [op.fault_duration_s for op in graph.ops] == [2e-3, 4e-3, 6e-3, 8e-3, 10e-3]
    assert [op.output_fault_duration_s for op in graph.ops] == pytest.approx([1.5e-3, 3e-3, 4.25e-3, 6e-3, 7.5e-3], rel=1e-12)
    assert {t.id: t.bytes for t in graph.tensors.values() if t.kind == "workspace"} == {"workspace2": 4096}
    # the directory's own times file still finds its batch-4 fault and workspace files
    own = read_g10(trace_dir)
    assert [op.fault_duration_s for op in own.ops] == pytest.approx([9e-3] * 5, rel=1e-12)
    assert {t.id for t in own.tensors.values() if t.kind == "workspace"} == {"workspace4"}
