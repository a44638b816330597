"""FlashNeuron's choice of activations to offload, worked out by hand on a three-layer
MLP (weights 4 pages each, activations 16): 24 pages of weights and optimizer state, the
largest op (bwd2) needs 56 pages, the loss is op 3. The forward activations used after
it, in forward order: x (gap 0 -> 5), a0 (gap 1 -> 4), a1 and a2 (used up to the loss,
no gap to hide in)."""

import pytest

from matndp.host.graph import IterationGraph
from matndp.host.tier.lifetime import Lifetimes
from matndp.host.tier.plan import Chunk, InfeasibleError
from matndp.host.tier.policies.flashneuron import flashneuron_offloads, plan_flashneuron

from ..graphs import PAGE, mlp_graph


@pytest.fixture
def lifetimes():
    return Lifetimes(mlp_graph(layers=3, activation_pages=16, weight_pages=4), PAGE)


def test_activations_are_offloaded_in_forward_order_until_the_rest_fits(lifetimes):
    """120 pages: 40 for activations beside weights and the largest op. The 64 pages of
    forward activations: offloading x leaves 48, a0 leaves 32 < 40: stop."""
    gaps = flashneuron_offloads(lifetimes, 120)
    assert [(lifetimes.tensor_ids[g.tensor], g.after, g.before) for g in gaps] == \
        [("x", 0, 5), ("a0", 1, 4)]
    plan = plan_flashneuron(lifetimes, 120)
    x, a0 = lifetimes.index["x"], lifetimes.index["a0"]
    assert plan.chunks == (Chunk(x, 16, 0, 1, 1, 5, 5, "flash"), Chunk(a0, 16, 1, 2, 2, 4, 4, "flash"))
    assert plan.sync_at == (3,)


def test_activations_that_cannot_be_offloaded_and_do_not_fit_make_it_fail(lifetimes):
    """110 pages: 30 for activations; after x and a0, a1 and a2 (32 pages) have no gap
    to be offloaded in and stay: more than 30."""
    with pytest.raises(InfeasibleError, match="32 pages of forward activations it cannot "
                                              "offload stay in GPU memory, which has 30 pages"):
        flashneuron_offloads(lifetimes, 110)


def test_a_pinned_set_as_large_as_the_gpu_makes_it_fail(lifetimes):
    """80 pages: the weights (24) and the largest op's tensors (56) take all of it."""
    with pytest.raises(InfeasibleError, match=r"weights \(24 pages\) and room for the largest "
                                              r"op's tensors \(56 pages, 'bwd2'\)"):
        flashneuron_offloads(lifetimes, 80)


@pytest.mark.parametrize("capacity, offloaded", [
    (145, []),                  # 65 pages of room: all 64 fit
    (144, ["x"]),               # 64: the rest must be less than the room
    (112, ["x", "a0"]),         # 32: a1 and a2 (32) stay, exactly the room
])
def test_offloading_stops_once_the_rest_is_less_than_the_room(lifetimes, capacity, offloaded):
    gaps = flashneuron_offloads(lifetimes, capacity)
    assert [lifetimes.tensor_ids[g.tensor] for g in gaps] == offloaded


def test_the_refusals_are_whole_messages(lifetimes):
    with pytest.raises(InfeasibleError, match=r"^FlashNeuron: 32 pages of forward activations it "
                                              r"cannot offload stay in GPU memory, which has 31 "
                                              r"pages for them beside the weights and the largest "
                                              r"op's tensors$"):
        flashneuron_offloads(lifetimes, 111)
    with pytest.raises(InfeasibleError, match=r"^FlashNeuron keeps the weights \(24 pages\) and "
                                              r"room for the largest op's tensors \(56 pages, "
                                              r"'bwd2'\) in GPU memory: not less than its 80 pages$"):
        flashneuron_offloads(lifetimes, 80)


def test_the_plan_leaves_the_rest_to_run_time(lifetimes):
    plan = plan_flashneuron(lifetimes, 120)
    assert (plan.policy, plan.n_slots, plan.capacity_pages, plan.strict) == (
        "flashneuron", lifetimes.n_ops, 120, False)


def test_an_iteration_without_a_backward_pass_offloads_nothing():
    forward = mlp_graph(layers=3, activation_pages=16, weight_pages=4)
    only = IterationGraph("forward", forward.tensors.values(),
                          [op for op in forward.ops if op.phase == "forward"], batch=1,
                          dtype="fp32")
    lifetimes = Lifetimes(only, PAGE)
    assert flashneuron_offloads(lifetimes, 200) == []
    plan = plan_flashneuron(lifetimes, 200)
    assert (plan.chunks, plan.sync_at) == ((), ())
