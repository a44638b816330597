"""Energy: parts and totals worked out by hand from the cited constants on hand-made graphs;
every constant is documented."""

import dataclasses
import pathlib

import pytest

from matndp.host.calibration import Calibration, KernelCost, NDPHardware
from matndp.host.energy import (EnergyBreakdown, EnergyConstants, baseline_energy, matndp_energy,
                                ndp_slice_static_w)
from matndp.host.gpu import PRESETS
from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.offload import PlannerConfig, plan_offload
from matndp.host.zoo import MODEL_NAMES, build_model
from matndp.hw.config import named_config

from tests.paths import REPOSITORY as ROOT

from .offload.graphs import GPU, calibration_of, chain


PJ = 1e-12
FP32_PJ_PER_FLOP = (0.38 + 1.31) / 2       # Jouppi et al. 7 nm add + multiply per 2 FLOPs
DRAM_PJ_PER_BIT = 3.97                      # O'Connor et al. HBM2 device
TRANSPORT_PJ_PER_BIT = 13.11 - 3.97         # Antepara et al. A100 HBM level minus device
NDP_PJ_PER_INSTRUCTION = 53.8 + 3 * 17.6    # M2NDP issue + three register file accesses
NDP_STATIC_W_PER_SLICE = 0.272 / 4          # M2NDP unit of four sub-cores


def test_totals_of_a_hand_made_iteration():
    """mm1 -> ReLU -> mm2 on the round GPU (200 W), the ReLU on the fly on mm1's writes.

    Baseline: 2 x 805 us GEMMs + 5 us + 8 MB / 80 GB/s = 1.715 ms; 8.001 GFLOP; 32 MB.
    matNDP: 1.61 ms; the GEMMs' 8 GFLOP on the GPU; 24 MB through the GPU, the ReLU's 4 MB
    write from the NDP (y is never re-read); 125 000 packets x 10 cycles on 16 slices."""
    plan = plan_offload(chain(), GPU, calibration_of({"relu_fwd": (10,)}))
    baseline_s, matndp_s = 2 * 805e-6 + 5e-6 + 100e-6, 2 * 805e-6
    base = (8.001e9 * FP32_PJ_PER_FLOP * PJ + 32e6 * 8 * (DRAM_PJ_PER_BIT + TRANSPORT_PJ_PER_BIT) * PJ
            + 200 * 0.3 * baseline_s)
    ndp = (8e9 * FP32_PJ_PER_FLOP * PJ + 1.25e6 * NDP_PJ_PER_INSTRUCTION * PJ
           + 28e6 * 8 * DRAM_PJ_PER_BIT * PJ + 24e6 * 8 * TRANSPORT_PJ_PER_BIT * PJ
           + 200 * 0.3 * matndp_s + 16 * NDP_STATIC_W_PER_SLICE * matndp_s)
    assert baseline_energy(plan).total_j == pytest.approx(base, rel=1e-9)
    assert matndp_energy(plan).total_j == pytest.approx(ndp, rel=1e-9)
    assert matndp_energy(plan).as_dict()["total_j"] == pytest.approx(ndp, rel=1e-9)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_no_part_is_negative_on_any_model(name):
    graph = build_model(name, batch=2, dtype="bf16",
                        seq_len=32 if name in ("bert-base", "gpt2") else None)
    plan = plan_offload(graph, PRESETS["a100"])
    for energy in (baseline_energy(plan), matndp_energy(plan)):
        assert all(value >= 0 for value in energy.as_dict().values())


def test_parts_worked_out_by_hand():
    # one FP32 element-wise op over 1 M elements with no NDP kernel: stays on the GPU
    n = 1_000_000
    tensors = [Tensor("x", (n,), "fp32", "activation"), Tensor("y", (n,), "fp32", "activation")]
    graph = IterationGraph("one", tensors, [Op("op", "elementwise", "forward", 3 * n, ("x",),
                                               ("y",))], batch=1, dtype="fp32")
    gpu = PRESETS["v100"]
    plan = plan_offload(graph, gpu)
    energy = baseline_energy(plan)
    bits = 8 * 8 * n
    # Jouppi et al. 7 nm FP32 add 0.38 pJ + multiply 1.31 pJ per multiply-add (2 FLOPs)
    assert energy.gpu_compute_j == pytest.approx(3 * n * 1.69 / 2 * 1e-12)
    assert energy.dram_j == pytest.approx(bits * 3.97e-12)                 # O'Connor HBM2
    assert energy.gpu_transport_j == pytest.approx(bits * (13.11 - 3.97) * 1e-12)
    # V100: 4 us launch + 8 MB at 900 GB/s x 0.85 (element-wise); 3 MFLOP take 0.4 us
    assert energy.gpu_static_j == pytest.approx(300 * 0.3 * (4e-6 + 8e6 / (900e9 * 0.85)))


def test_ndp_parts_worked_out_by_hand():
    n = 8_000_000
    tensors = [Tensor("x", (n,), "fp32", "weight"), Tensor("m", (n,), "fp32", "optimizer_state")]
    graph = IterationGraph("opt", tensors, [Op("step", "optimizer", "optimizer", 16 * n,
                                               ("x", "m"), ("x", "m"), (),
                                               {"ndp_kernel": "adam"})], batch=1, dtype="fp32")
    from types import MappingProxyType
    calibration = Calibration(MappingProxyType({"adam": KernelCost(30, fixed_cycles=100)}),
                              NDPHardware(slices_per_controller=2, clock_hz=1e9))
    plan = plan_offload(graph, PRESETS["v100"], calibration, PlannerConfig("all"))
    assert plan.placements["step"].where == "ndp"
    energy = matndp_energy(plan)
    cycles = n / 8 * 30 + 100
    # M2NDP: vector issue 0.0538 nJ + 3 register accesses of 0.0176 nJ per instruction
    assert energy.ndp_compute_j == pytest.approx(cycles * (53.8 + 3 * 17.6) * 1e-12)
    assert energy.gpu_compute_j == 0 and energy.gpu_transport_j == 0
    assert energy.dram_j == pytest.approx(4 * 4 * n * 8 * 3.97e-12)
    # M2NDP static 0.272 W per unit of 4 sub-cores; 8 controllers x 2 slices, for the
    # compute-bound step: 1 M packets x 30 cycles / 16 GHz + 100 cycles at 1 GHz (its
    # 128 MB would take 158 us at 810 GB/s)
    assert energy.ndp_static_j == pytest.approx(16 * 0.272 / 4 * (1e6 * 30 / 16e9 + 100e-9))
    # Measured, the instructions a packet are fewer than its cycles (slots waiting on
    # memory issue nothing): the instructions are charged, the cycles still set the time.
    counted = Calibration(MappingProxyType({"adam": KernelCost(30, fixed_cycles=100, instructions=24)}),
                          NDPHardware(slices_per_controller=2, clock_hz=1e9))
    counted_plan = plan_offload(graph, PRESETS["v100"], counted, PlannerConfig("all"))
    assert counted_plan.ndp_cycles == pytest.approx(cycles)
    assert counted_plan.ndp_instructions == pytest.approx(n / 8 * 24 + 100)
    assert matndp_energy(counted_plan).ndp_compute_j == \
        pytest.approx((n / 8 * 24 + 100) * (53.8 + 3 * 17.6) * 1e-12)
    assert counted_plan.matndp_s == pytest.approx(plan.matndp_s)
    # A slice of four sub-cores is charged four sub-cores' static power.
    wide = Calibration(calibration.kernels, NDPHardware(slices_per_controller=2, clock_hz=1e9,
                                                        slice=named_config("channel")))
    wide_plan = plan_offload(graph, PRESETS["v100"], wide, PlannerConfig("all"))
    assert ndp_slice_static_w(wide.hardware) == pytest.approx(4 * 0.272 / 4)
    assert matndp_energy(wide_plan).ndp_static_j == \
        pytest.approx(16 * 0.272 * wide_plan.matndp_s)


def test_offloading_saves_transport_energy_on_every_model():
    for name in MODEL_NAMES:
        graph = build_model(name, batch=2, seq_len=32 if name in ("bert-base", "gpt2") else None)
        plan = plan_offload(graph, PRESETS["v100"])
        assert matndp_energy(plan).gpu_transport_j < baseline_energy(plan).gpu_transport_j


def test_every_constant_is_documented_with_its_value():
    text = (ROOT / "docs" / "energy.md").read_text()
    for field in dataclasses.fields(EnergyConstants):
        assert f"`{field.name}`" in text, f"docs/energy.md does not cite {field.name}"


def test_breakdown_sums_all_fields():
    energy = EnergyBreakdown(1, 2, 3, 4, 5, 6, 7)
    assert energy.total_j == 28 and energy.as_dict()["total_j"] == 28
