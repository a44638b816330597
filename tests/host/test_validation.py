"""The tables of ``matndp gpu validate`` (docs/validation.md): the published setups (a V100
cut to 20 SMs at 1380 MHz with 8 of its 32 HBM2 channels; the workloads and batches of
NDPX and XLA-NDP), each row's cells against a run of that setup, and the operator-class
shares against sums over the model's ops."""

import math
import statistics

import pytest

from matndp.host.calibration import load_calibration
from matndp.host.gpu import PRESETS, baseline_timeline
from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.report import RunConfig, run_gpu
from matndp.host.validation import runtime_shares, scaled_v100, validation_tables
from matndp.host.zoo import build_model


# The published workloads: model, batch, sequence length (XLA-NDP).
WORKLOADS = [("resnet50", 64, None), ("vgg16_bn", 32, None), ("bert-base", 32, 128),
             ("gpt2", 8, 512)]


def _tables(text):
    """{heading: (header cells, rows of cells)} of the Markdown tables under ``###`` headings."""
    tables, heading = {}, None
    for line in text.splitlines():
        if line.startswith("### "):
            heading = line[4:]
        elif line.startswith("| "):
            cells = [cell.strip() for cell in line.strip()[1:-1].split("|")]
            if heading not in tables:
                tables[heading] = (cells, [])
            elif set(cells) != {"---"}:
                tables[heading][1].append(cells)
            else:
                assert len(cells) == len(tables[heading][0]), f"{heading}: separator"
    return tables


# Each test makes the tables itself (no shared fixture), so that the mutation run records
# every test that reads them as reaching validation_tables (docs/testing.md).
def _table(tables, start):
    return next(table for heading, table in tables.items() if heading.startswith(start))


def _run(model, gpu, batch, dtype, policy, seq_len=None, slices=None, **single_gpu):
    return run_gpu(RunConfig(model, gpu, batch, dtype, seq_len=seq_len, policy=policy,
                             ndp_slices_per_controller=slices, **single_gpu))


def test_the_scaled_v100_is_the_published_simulation_setup():
    v100, gpu = PRESETS["v100"], scaled_v100()
    assert gpu.name == "v100-20sm"
    assert gpu.fp32_tflops == pytest.approx(15.7 * 20 / 80 * 1380 / 1530)
    assert gpu.tensor_tflops == pytest.approx(125 * 20 / 80 * 1380 / 1530)
    assert gpu.memory_gbs == pytest.approx(900 * 8 / 32)
    assert gpu.memory_controllers == v100.memory_controllers == 8


def test_the_first_line_names_the_calibration_and_the_scaled_gpu():
    text = validation_tables()
    assert text.splitlines()[0] == (
        f"NDP calibration: {load_calibration().describe()['source']}; scaled GPU: "
        "3.54 FP32 / 28.2 FP16 TFLOPS, 225 GB/s, 8 controllers.")


def test_every_row_has_a_cell_per_column():
    tables = _tables(validation_tables())
    assert len(tables) == 7
    for heading, (header, rows) in tables.items():
        assert rows, heading
        for row in rows:
            assert len(row) == len(header), (heading, row)


def test_the_ndpx_rows_are_runs_of_vgg16_on_the_scaled_gpu():
    tables = _tables(validation_tables())
    header, rows = _table(tables, "NDPX")
    assert header == ["batch", "dtype", "policy", "NDP slices / controller", "baseline ms",
                      "matNDP ms", "speedup", "offloaded share", "Amdahl bound"]
    slices = load_calibration().hardware.slices_per_controller
    expected = [(batch, dtype, policy, more) for batch in (16, 64) for dtype in ("fp16", "fp32")
                for policy, more in (("auto", None), ("all", None), ("all", 4 * slices))]
    assert len(rows) == len(expected)
    for row, (batch, dtype, policy, more) in zip(rows, expected):
        r = _run("vgg16_bn", scaled_v100(), batch, dtype, policy, slices=more)
        assert row == [str(batch), dtype, policy, str(more or slices),
                       f"{r['baseline_s'] * 1e3:.1f}", f"{r['matndp_s'] * 1e3:.1f}",
                       f"{r['speedup']:.3f}", f"{r['offloaded_share']:.1%}",
                       f"{r['amdahl_bound']:.3f}"]


def test_the_ndpx_placement_rows_are_runs_of_vgg16_in_the_expander():
    text = validation_tables()
    header, rows = _table(_tables(text), "NDPX placement")
    assert header == ["batch", "dtype", "policy", "optimizer on", "NDP slices / controller",
                      "baseline ms", "matNDP ms", "speedup", "offloaded share", "Amdahl bound"]
    assert ("Link 64 GB/s per direction at 80%; expander DRAM 307.2 GB/s over 8 controllers "
            "with NDP slices; the baseline is the same GPU and expander without NDP.") in text
    slices = load_calibration().hardware.slices_per_controller
    expected = [(batch, dtype, policy, optimizer, more) for batch in (16, 64)
                for dtype in ("fp16", "fp32")
                for policy, optimizer, more in (("auto", "NDP", None), ("all", "NDP", 4 * slices),
                                                ("auto", "GPU", None))]
    assert len(rows) == len(expected) == 12
    for row, (batch, dtype, policy, optimizer, more) in zip(rows, expected):
        r = _run("vgg16_bn", scaled_v100(), batch, dtype, policy, slices=more,
                 placement="expander", offload_optimizer=optimizer == "NDP")
        assert r["memory_placement"]["name"] == "expander"
        assert row == [str(batch), dtype, policy, optimizer, str(more or slices),
                       f"{r['baseline_s'] * 1e3:.1f}", f"{r['matndp_s'] * 1e3:.1f}",
                       f"{r['speedup']:.3f}", f"{r['offloaded_share']:.1%}",
                       f"{r['amdahl_bound']:.3f}"]
    # the same GPU as the local rows, its memory traffic now over the link
    local = {(row[0], row[1]): row for row in _table(_tables(text), "NDPX:")[1]}
    for row in rows:
        assert float(row[5]) > float(local[row[0], row[1]][4])


def test_the_xla_ndp_rows_and_their_mean():
    tables = _tables(validation_tables())
    header, rows = _table(tables, "XLA-NDP")
    assert header == ["model", "batch", "speedup (auto)", "speedup (all)", "offloaded share",
                      "Amdahl bound"]
    assert len(rows) == len(WORKLOADS) + 1
    for row, (model, batch, seq_len) in zip(rows, WORKLOADS):
        auto = _run(model, scaled_v100(), batch, "fp16", "auto", seq_len)
        every = _run(model, scaled_v100(), batch, "fp16", "all", seq_len)
        assert row == [model, str(batch), f"{auto['speedup']:.3f}", f"{every['speedup']:.3f}",
                       f"{auto['offloaded_share']:.1%}", f"{auto['amdahl_bound']:.3f}"]
    speedups = [float(row[2]) for row in rows[:-1]]
    mean, geometric, best = (float(part) for part in rows[-1][2].split(" / "))
    assert rows[-1][0] == "**mean / geometric mean / best**"
    assert mean == pytest.approx(statistics.mean(speedups), abs=1e-3)
    assert geometric == pytest.approx(math.prod(speedups) ** (1 / len(speedups)), abs=1e-3)
    assert best == max(speedups)


def _percent(cell):
    return float(cell.rstrip("%").strip()) / 100


def _class_sums(graph, select):
    """FLOP and V100 time per Ivanov et al. class, summed over the selected ops."""
    classes = {"gemm": "tensor contraction", "conv": "tensor contraction",
               "normalization": "normalization", "softmax": "normalization",
               "elementwise": "element-wise"}
    times = {e.op: e.duration_s for e in baseline_timeline(graph, PRESETS["v100"])}
    flops, runtime = {}, {}
    for op in graph.ops:
        if select(op):
            group = classes.get(op.kind, "other")
            flops[group] = flops.get(group, 0) + op.flops
            runtime[group] = runtime.get(group, 0) + times[op.name]
    return flops, runtime


def _check_shares(rows, flops, runtime, flop_column, runtime_column):
    assert [row[0] for row in rows] == sorted(flops)
    for row in rows:
        group = row[0]
        assert _percent(row[flop_column]) == pytest.approx(
            flops[group] / sum(flops.values()), abs=5e-5)
        assert _percent(row[runtime_column]) == pytest.approx(
            runtime[group] / sum(runtime.values()), abs=5e-4)


def test_the_bert_layer_shares_beside_ivanov_et_al():
    tables = _tables(validation_tables())
    header, rows = _table(tables, "Where BERT")
    assert header == ["class", "FLOP share (ours)", "FLOP share (published)",
                      "runtime share (ours)", "runtime share (published)"]
    published = {"tensor contraction": ["99.80 %", "61.0 %"],
                 "normalization": ["0.17 %", "25.5 %"], "element-wise": ["0.03 %", "13.5 %"]}
    for row in rows:
        assert [row[2], row[4]] == published.get(row[0], ["-", "-"])
    bert = build_model("bert-base", batch=8, dtype="fp16", seq_len=512)
    flops, runtime = _class_sums(bert, lambda op: ".layer." in op.name and op.phase != "optimizer")
    _check_shares(rows, flops, runtime, 1, 3)


def test_the_resnet_shares_per_dtype():
    tables = _tables(validation_tables())
    header, rows = _table(tables, "Where ResNet-50")
    assert header == ["dtype", "class", "FLOP share", "runtime share"]
    for dtype in ("fp32", "fp16"):
        mine = [row[1:] for row in rows if row[0] == dtype]
        resnet = build_model("resnet50", batch=64, dtype=dtype)
        flops, runtime = _class_sums(resnet, lambda op: op.phase != "optimizer")
        _check_shares(mine, flops, runtime, 1, 2)
    assert len(rows) == 2 * len(flops)


def test_the_full_preset_rows():
    tables = _tables(validation_tables())
    header, rows = _table(tables, "matNDP on the full presets")
    assert header == ["model", "batch", "GPU", "baseline ms", "matNDP ms", "speedup",
                      "Amdahl bound", "DRAM bytes saved", "energy saved"]
    expected = [(model, batch, seq_len, gpu) for model, batch, seq_len in WORKLOADS
                for gpu in PRESETS if PRESETS[gpu].kind == "gpu"]
    assert len(rows) == len(expected) == 4 * 3
    for row, (model, batch, seq_len, gpu) in zip(rows, expected):
        r = _run(model, gpu, batch, "fp16", "auto", seq_len)
        assert row == [model, str(batch), gpu, f"{r['baseline_s'] * 1e3:.1f}",
                       f"{r['matndp_s'] * 1e3:.1f}", f"{r['speedup']:.3f}",
                       f"{r['amdahl_bound']:.3f}",
                       f"{1 - r['dram_bytes_matndp'] / r['dram_bytes_baseline']:.1%}",
                       f"{1 - r['energy_j_matndp'] / r['energy_j_baseline']:.1%}"]


def test_runtime_shares_of_a_hand_made_graph():
    """A 6-FLOP GEMM, a 2-FLOP softmax and a 1-FLOP gather (a kind of no class) share 6/9,
    2/9 and 1/9 of the FLOPs; their times are the GPU timeline's; the optimizer step is
    not selected."""
    tensors = [Tensor(name, (256,), "fp32", "activation") for name in ("x", "g", "s", "o", "w")]
    ops = [Op("gemm", "gemm", "forward", 6, ("x",), ("g",)),
           Op("softmax", "softmax", "forward", 2, ("g",), ("s",)),
           Op("gather", "gather", "forward", 1, ("s",), ("o",)),
           Op("step", "optimizer", "optimizer", 5, ("o",), ("w",))]
    graph = IterationGraph("hand", tensors, ops, batch=1, dtype="fp32")
    shares = runtime_shares(graph, PRESETS["v100"], lambda op: op.phase != "optimizer")
    times = {e.op: e.duration_s for e in baseline_timeline(graph, PRESETS["v100"])}
    total = times["gemm"] + times["softmax"] + times["gather"]
    expected = {"normalization": (2 / 9, times["softmax"] / total),
                "other": (1 / 9, times["gather"] / total),
                "tensor contraction": (6 / 9, times["gemm"] / total)}
    assert list(shares) == list(expected)
    for group, (flop_share, time_share) in expected.items():
        assert shares[group] == pytest.approx((flop_share, time_share))


def test_the_ndpxnet_rows_are_data_parallel_runs_priced_as_their_reports_say():
    from matndp.host.report import RunConfig, run_gpu
    header, rows = _table(_tables(validation_tables()), "NDPXNet")
    assert header == ["model", "batch", "GPUs", "expander cycles / reduced sector",
                      "exposed: all-reduce + GPU optimizer ms", "exposed: NDPXNet ms",
                      "baseline ms", "NDPXNet ms", "speedup", "GPU memory freed / GPU"]
    assert [(row[0], row[2]) for row in rows] == [("resnet50", "4"), ("resnet50", "8"),
                                                  ("bert-base", "4"), ("bert-base", "8")]
    for row in rows:
        seq_len = 128 if row[0] == "bert-base" else None
        r = run_gpu(RunConfig(row[0], "a100", int(row[1]), "fp16", int(row[2]), seq_len))
        base, ours = r["ndpxnet"]["baseline"], r["ndpxnet"]["matndp"]
        cost = r["ndpxnet"]["expander_cost"]
        assert row[3].startswith(f"{cost['cycles_per_reduced_sector']:.1f} (")
        assert row[3].endswith("(assumed)") == (cost["source"] == "assumption")
        assert row[4] == f"{(base['allreduce_exposed_s'] + base['optimizer_gpu_s']) * 1e3:.2f}"
        assert row[5] == f"{ours['ndpxnet_exposed_s'] * 1e3:.3f}"
        assert row[8] == f"{r['speedup']:.3f}"
        # the times in milliseconds, to 0.1 ms; the memory freed in bytes with an SI prefix
        assert float(row[6]) == pytest.approx(r["baseline_s"] * 1e3, abs=0.05)
        assert float(row[7]) == pytest.approx(r["matndp_s"] * 1e3, abs=0.05)
        assert (len(row[6].split(".")[1]), len(row[7].split(".")[1])) == (1, 1)
        value, unit = row[9].split()
        freed = ours["memory_saved_per_gpu_bytes"]
        assert freed >= 1e6 and unit in ("MB", "GB")
        assert float(value) * {"MB": 1e6, "GB": 1e9}[unit] == pytest.approx(freed, rel=5e-3)
