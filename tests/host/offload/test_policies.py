"""Offload policies and placement types: one registry each, and what every policy keeps
on the GPU on hand-made graphs (times from the round GPU of :mod:`.graphs`)."""

import pytest

from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.offload import (OFFLOAD_POLICIES, PLACEMENTS, GpuCarrier, NdpCarrier, OnGpu,
                                 OnTheFly, PlannerConfig, Standalone, plan_offload)

from .graphs import GPU, N, calibration_of, chain


def test_policies_and_placements_are_registered_by_name():
    assert OFFLOAD_POLICIES.names == ("auto", "all", "none")
    assert PLACEMENTS == {"gpu": OnGpu, "on_the_fly": OnTheFly, "ndp": Standalone}
    assert [cls.offloaded for cls in PLACEMENTS.values()] == [False, True, True]


def test_placements_are_typed_with_their_carriers():
    plan = plan_offload(chain(), GPU, calibration_of({"relu_fwd": (10,)}))
    mm1, middle = plan.placements["mm1"], plan.placements["middle"]
    assert isinstance(mm1, OnGpu) and mm1.reason == "no NDP kernel"
    assert isinstance(middle, OnTheFly) and middle.carrier == GpuCarrier("mm1")
    assert (middle.producer, middle.trigger, middle.kernel) == ("mm1", "y", "relu_fwd")
    assert [entry.where for entry in plan.schedule] == ["gpu", "on_the_fly", "gpu"]


def test_policy_none_keeps_every_op_on_the_gpu():
    plan = plan_offload(chain(), GPU, calibration_of({"relu_fwd": (10,)}), PlannerConfig("none"))
    middle = plan.placements["middle"]
    assert isinstance(middle, OnGpu) and middle.reason == "policy none"
    assert middle.kernel == "relu_fwd"


def _compute_bound_chain():
    """The chain with a middle op of 4 GFLOP: 800 us of compute against 100 us of traffic."""
    graph = chain()
    ops = [Op(op.name, op.kind, op.phase, 4 * 10 ** 9, op.inputs, op.outputs, op.deps, op.attrs)
           if op.name == "middle" else op for op in graph.ops]
    return IterationGraph("compute-bound", graph.tensors.values(), ops, batch=1, dtype="fp32")


def test_auto_keeps_a_compute_bound_op_and_all_offloads_it():
    calibration = calibration_of({"relu_fwd": (10,)})
    auto = plan_offload(_compute_bound_chain(), GPU, calibration)
    assert auto.placements["middle"].reason == "compute-bound on the GPU"
    every = plan_offload(_compute_bound_chain(), GPU, calibration, PlannerConfig("all"))
    assert isinstance(every.placements["middle"], OnTheFly)


def test_auto_names_the_estimate_it_refuses():
    # 125 000 packets x 20 000 cycles / 16 GHz = 156.25 ms riding on mm1 (805 us alone):
    # mm1 stretches to 5 us + 156.25 ms, 155 450 us more, against 5 + 100 us on the GPU
    plan = plan_offload(chain(), GPU, calibration_of({"relu_fwd": (20_000,)}))
    middle = plan.placements["middle"]
    assert middle.reason == "NDP estimate 155450.0 us not below GPU 105.0 us"
    # the refused op stays a GPU kernel, its placement still naming its kernel and trigger
    assert isinstance(middle, OnGpu)
    assert (middle.kernel, middle.trigger) == ("relu_fwd", "y")


def _optimizer_graph():
    tensors = [Tensor("w", (N,), "fp32", "weight"), Tensor("m", (N,), "fp32", "optimizer_state")]
    ops = [Op("step", "optimizer", "optimizer", 16 * N, ("w", "m"), ("w", "m"), (),
              {"ndp_kernel": "adam"})]
    return IterationGraph("step", tensors, ops, batch=1, dtype="fp32")


@pytest.mark.parametrize("policy", ["auto", "all"])
def test_the_optimizer_step_can_be_kept_on_the_gpu(policy):
    calibration = calibration_of({"adam": (10,)})
    kept = plan_offload(_optimizer_graph(), GPU, calibration, PlannerConfig(policy, False))
    assert kept.placements["step"].reason == "optimizer offload disabled"
    moved = plan_offload(_optimizer_graph(), GPU, calibration, PlannerConfig(policy))
    assert isinstance(moved.placements["step"], Standalone)
    assert moved.placements["step"].carrier == NdpCarrier("step")


@pytest.mark.parametrize("name", ["greedy", None, "AUTO"])
def test_unknown_offload_policies_are_refused_naming_the_known_ones(name):
    with pytest.raises(ValueError, match=r"unknown offload policy .*; known: auto, all, none"):
        PlannerConfig(name)
