"""Energy: totals equal the sum of their parts; parts worked out by hand from the cited
constants; every constant is documented."""

import dataclasses
import pathlib

import pytest

from matndp.host.calibration import Calibration, KernelCost, NDPHardware
from matndp.host.energy import EnergyBreakdown, EnergyConstants, baseline_energy, matndp_energy
from matndp.host.gpu import PRESETS
from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.offload import PlannerConfig, plan_offload
from matndp.host.zoo import MODEL_NAMES, build_model

from tests.paths import REPOSITORY as ROOT


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_totals_equal_the_sum_of_the_parts(name):
    graph = build_model(name, batch=2, dtype="bf16",
                        seq_len=32 if name in ("bert-base", "gpt2") else None)
    plan = plan_offload(graph, PRESETS["a100"])
    for energy in (baseline_energy(plan), matndp_energy(plan)):
        parts = energy.as_dict()
        total = parts.pop("total_j")
        assert total == pytest.approx(sum(parts.values()), rel=1e-12)
        assert all(value >= 0 for value in parts.values())


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
    assert energy.gpu_static_j == pytest.approx(300 * 0.3 * plan.baseline_s)


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
    # M2NDP static 0.272 W per unit of 4 sub-cores; 8 controllers x 2 slices
    assert energy.ndp_static_j == pytest.approx(16 * 0.272 / 4 * plan.matndp_s)


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
