"""The expander's reduction launch as the GPUs' writes see it, and its run on the
instruction-set simulator refusing a faulting kernel (the kernels' results against the
golden: tests/sim/golden/test_expander.py)."""

import numpy as np
import pytest

from matndp.host.kernels.expander import ReductionLaunch, run_on_iss
from matndp.host.kernels.library import LibraryError


FULL = (1 << 32) - 1          # every byte of a 32-byte sector enabled


def test_a_gradients_writes_are_its_sectors_in_address_order_the_ragged_last_one_masked():
    grad = np.arange(1, 12, dtype=np.float64) / 4               # 11 values: 44 bytes
    writes = ReductionLaunch("sum", 11, 2).sector_writes(grad)
    raw = grad.astype("<f4").tobytes()
    assert writes == [(0, raw[:32], FULL), (32, raw[32:] + bytes(20), (1 << 12) - 1)]


def test_a_gradient_of_whole_sectors_enables_every_byte():
    grad = np.linspace(-1, 1, 16, dtype=np.float32)
    writes = ReductionLaunch("adam", 16, 3).sector_writes(grad)
    raw = grad.tobytes()
    assert writes == [(0, raw[:32], FULL), (32, raw[32:], FULL)]


def test_a_gradient_of_any_shape_is_written_in_c_order():
    grad = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    launch = ReductionLaunch("sum", 24, 2)
    assert launch.sector_writes(grad) == launch.sector_writes(grad.reshape(-1))
    assert launch.sector_writes(grad.transpose(2, 1, 0)) == \
        launch.sector_writes(grad.transpose(2, 1, 0).copy().reshape(-1))
    with pytest.raises(LibraryError, match="^a gradient of 24 elements, not 25$"):
        launch.sector_writes(np.zeros((5, 5), np.float32))


def test_a_faulting_kernel_is_refused_naming_its_first_fault(monkeypatch):
    """The sum's address moved off its sector: each sector's µthread faults at the sum's
    store, vstm.x, the kernel's 11th instruction. The first to fault is started by GPU 1's
    write of sector 0, the first sector's last write, so the first µthread (SEQ 0); the
    entry then stops."""
    original = ReductionLaunch.arguments

    def misaligned(self, addresses):
        return original(self, {**addresses, "sum": addresses["sum"] + 4})
    monkeypatch.setattr(ReductionLaunch, "arguments", misaligned)
    launch = ReductionLaunch("sum", 16, 2)
    grads = [np.ones(16, np.float32), np.full(16, 2, np.float32)]
    with pytest.raises(RuntimeError) as caught:
        run_on_iss(launch, grads, {}, [(0, 0), (0, 1), (1, 0), (1, 1)])
    assert str(caught.value) == ("expander_sum: entry 0: MISALIGNED at pc 10 (.main, µthread 0): "
                                 "address not aligned to 32 bytes")
