"""Which part of a tensor each slice holds: worked out by hand for small tensors, every
granule held by exactly one slice, and a block's share on two slices as the interleave
deals them."""

import numpy as np
import pytest

from matndp.host.graph import Tensor
from matndp.sim.flows.cosim.interleave import held_count, held_granules, spread_slices
from matndp.sim.flows.cosim.iteration import share_elements, share_iteration
from matndp.sim.flows.cosim.setup import CosimError, CosimSetup

from .test_cosim import SECTOR, mlp


# 8 rows (batch 2 × 1 × 4 positions) of 4 channels, over 3 slices: rows 0, 3, 6 lie in slice
# 0, rows 1, 4, 7 in slice 1, rows 2, 5 in slice 2.
ACTIVATION = Tensor("act", (2, 4, 1, 4), "fp32", "activation")
# 30 fp32 elements = 120 bytes = 4 sectors of 8 elements, the last holding 6: sectors 0 and
# 3 (the tail) lie in slice 0, sector 1 in slice 1, sector 2 in slice 2.
WEIGHT = Tensor("w", (10, 3), "fp32", "weight")


def test_a_small_tensor_s_share_on_each_slice_worked_out_by_hand():
    assert [share_elements(ACTIVATION, 3, index) for index in range(3)] == [3 * 4, 3 * 4, 2 * 4]
    assert [share_elements(WEIGHT, 3, index) for index in range(3)] == [2 * 8, 8, 8]
    assert held_granules(8, 3, 2).tolist() == [2, 5]
    assert held_granules(4, 3, 0).tolist() == [0, 3]
    # A slice dealt fewer than two rows is given two (a batch-norm's variance needs them).
    assert share_elements(ACTIVATION, 6, 5) == 2 * 4 and held_count(8, 6, 5) == 1


@pytest.mark.parametrize("count, slices", [(1, 1), (7, 3), (6272, 160), (100, 160), (160, 160), (4099, 16)])
def test_the_slices_hold_every_granule_exactly_once(count, slices):
    held = np.concatenate([held_granules(count, slices, index) for index in range(slices)])
    assert sorted(held.tolist()) == list(range(count))
    counts = [held_count(count, slices, index) for index in range(slices)]
    assert counts == [len(held_granules(count, slices, index)) for index in range(slices)]
    assert max(counts) - min(counts) <= 1


def test_the_slices_simulated_are_spread_evenly_from_slice_0():
    assert spread_slices(4, 160) == [0, 40, 80, 120]
    assert spread_slices(1, 160) == [0]
    assert spread_slices(160, 160) == list(range(160))
    for count in (0, 161, True, 2.0):
        with pytest.raises(ValueError, match="the slices to simulate must be an integer in 1..160"):
            spread_slices(count, 160)
    for index in (-1, 3, True):
        with pytest.raises(ValueError, match="slice index must be an integer in 0..2"):
            held_count(8, 3, index)


def _fc1(index):
    planned = share_iteration(CosimSetup(block="fc1", slices=3, slice_index=index, policy="ideal",
                                         hbm_fraction=0.9), graph=mlp(32))
    return {step.op: step for step in planned.steps}


def test_a_block_s_share_on_two_slices_differs_as_the_interleave_deals_it():
    # Over 3 slices, in 32-byte sectors: x (32 x 256 fp32) 1,024 sectors -> 342 on slice 0,
    # 341 on slice 2; fc1.weight (256 x 256) 8,192 -> 2,731 and 2,730; fc1.bias (256) 32 ->
    # 11 and 10; fc1.out (32 x 256) 1,024 -> 342 and 341.
    for index, reads, writes, weight in ((0, 342 + 2731 + 11, 342, 2731), (2, 341 + 2730 + 10, 341, 2730)):
        steps = _fc1(index)
        (forward,) = steps["fc1"].stages
        assert int((~forward.write).sum()) == reads
        assert int(forward.write.sum()) == writes
        (relu,) = forward.launches
        assert relu.request.problem == {"elements": writes * SECTOR // 4}
        (sweep,) = steps["optimizer:fc1.weight"].stages
        assert len(sweep) == weight


def test_a_slice_beyond_the_gpu_s_is_refused():
    with pytest.raises(CosimError, match="slice_index must be below the 160 slices of a100's memory, not 160"):
        share_iteration(CosimSetup(block="fc1", slice_index=160), graph=mlp(32))
