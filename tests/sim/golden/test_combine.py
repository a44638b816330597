"""The combination of the slices' partial reductions: a small tensor split by hand into two
slices' shares against numpy over the whole tensor; the library's batch-norm goldens per
slice, combined, against the same goldens over the whole tensor; the order pinned (FP32
sums in another order give other bits); and bad partials refused."""

import numpy as np
import pytest

from matndp.sim.golden import combine
from matndp.sim.golden.kernels import GOLDENS


# 5 rows x 3 channels; the interleave deals rows round-robin over 2 slices: slice 0 holds
# rows 0, 2, 4 and slice 1 rows 1, 3.
X = np.array([[1.0, -2.0, 0.5],
              [3.0, 4.0, -1.5],
              [-2.0, 0.0, 2.5],
              [0.5, 1.0, 3.0],
              [2.0, -3.0, -0.5]], dtype=np.float32)
SHARES = (X[0::2], X[1::2])

# Float tolerance of a combination against the whole tensor's statistics: a few units in
# the last place of FP32 (2^-23 ≈ 1.2e-7) for each of the few roundings between them.
RTOL = 1e-6


def test_two_slices_sums_maxima_and_moments_of_a_small_tensor_against_numpy():
    assert [len(share) for share in SHARES] == [3, 2]
    sums = combine.combine_sums([share.sum(axis=0) for share in SHARES])
    np.testing.assert_array_equal(sums, np.array([4.5, 0.0, 4.0], dtype=np.float32))
    maxima = combine.combine_maxima([share.max(axis=0) for share in SHARES])
    np.testing.assert_array_equal(maxima, np.array([3.0, 4.0, 3.0], dtype=np.float32))
    count, mean, var = combine.combine_moments([3, 2], [share.mean(axis=0) for share in SHARES],
                                               [share.var(axis=0) for share in SHARES])
    whole = X.astype(np.float64)
    assert count == 5
    np.testing.assert_allclose(mean, whole.mean(axis=0), rtol=RTOL, atol=1e-7)
    np.testing.assert_allclose(var, whole.var(axis=0), rtol=RTOL)
    # Worked by hand for channel 0: means 1/3 and 1.75, variances 26/9 and 1.5625;
    # δ = 17/12, mean = 1/3 + (17/12)(2/5) = 0.9, M2 = 26/3 + 3.125 + (17/12)²(6/5) = 14.2.
    assert mean[0] == np.float32(0.9) and abs(var[0] - 14.2 / 5) < 1e-6


def _bn_stats(x, rows):
    problem = {"rows": rows, "channels": x.shape[1]}
    channels = x.shape[1]
    inputs = {"x": x.reshape(-1), "weight": np.ones(channels, np.float32),
              "bias": np.zeros(channels, np.float32), "running_mean": np.zeros(channels, np.float32),
              "running_var": np.ones(channels, np.float32)}
    return GOLDENS["bn_stats"](inputs, {"eps": 1e-5, "momentum": 0.1}, problem)


def test_bn_stats_of_every_slice_combined_equal_the_whole_tensors_to_float_tolerance():
    rng = np.random.default_rng(7)
    x = rng.normal(0.5, 2.0, (21, 8)).astype(np.float32)
    slices = 4
    shares = [x[index::slices] for index in range(slices)]
    outputs = [_bn_stats(share, len(share)) for share in shares]
    combined = combine.combine_bn_stats([len(share) for share in shares],
                                        [out["mean"] for out in outputs],
                                        [out["invstd"] for out in outputs], 1e-5)
    whole = _bn_stats(x, len(x))
    assert combined["count"] == 21
    np.testing.assert_allclose(combined["mean"], whole["mean"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(combined["invstd"], whole["invstd"], rtol=1e-5)
    np.testing.assert_allclose(combined["var"], x.astype(np.float64).var(axis=0), rtol=1e-5)


def test_bn_bwd_stats_of_every_slice_combined_equal_the_whole_tensors_to_float_tolerance():
    rng = np.random.default_rng(8)
    dy, x = (rng.normal(0, 1, (21, 8)).astype(np.float32) for _ in range(2))
    channels = 8
    mean, invstd = x.mean(axis=0).astype(np.float32), np.float32(1.3) * np.ones(channels, np.float32)

    def bwd(dy_rows, x_rows):
        inputs = {"dy": dy_rows.reshape(-1), "x": x_rows.reshape(-1), "mean": mean,
                  "invstd": invstd, "weight": np.ones(channels, np.float32)}
        return GOLDENS["bn_bwd_stats"](inputs, {}, {"rows": len(dy_rows), "channels": channels})
    outputs = [bwd(dy[index::3], x[index::3]) for index in range(3)]
    combined = combine.combine_bn_bwd_stats([out["grad_weight"] for out in outputs],
                                            [out["grad_bias"] for out in outputs])
    whole = bwd(dy, x)
    np.testing.assert_allclose(combined["grad_bias"], whole["grad_bias"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(combined["grad_weight"], whole["grad_weight"], rtol=1e-5, atol=1e-5)


def test_the_slice_order_is_pinned_another_order_gives_other_bits():
    partials = [np.float32([1.0]), np.float32([1e8]), np.float32([-1e8])]
    # (1 + 1e8) rounds to 1e8: slice order gives 0, the reverse order 1.
    assert combine.combine_sums(partials)[0] == 0.0
    assert combine.combine_sums(partials[::-1])[0] == 1.0
    means = [np.float32([1.8]), np.float32([0.1]), np.float32([-0.9])]
    variances = [np.float32([0.4]), np.float32([0.5]), np.float32([1.5])]
    forward = combine.combine_moments([1, 3, 5], means, variances)
    backward = combine.combine_moments([5, 3, 1], means[::-1], variances[::-1])
    assert forward[0] == backward[0] == 9
    assert forward[1].tobytes() != backward[1].tobytes() and forward[2].tobytes() != backward[2].tobytes()


def test_the_recovered_variance_is_the_slices_to_a_few_ulp_and_never_negative():
    var = np.float32([2.5, 1e-3, 0.0])
    invstd = (1 / np.sqrt(var.astype(np.float64) + 1e-5)).astype(np.float32)
    recovered = combine.variance_from_invstd(invstd, 1e-5)
    np.testing.assert_allclose(recovered[:2], var[:2], rtol=1e-5)
    assert 0.0 <= recovered[2] < 1e-10


@pytest.mark.parametrize("call, message", [
    (lambda: combine.combine_sums([]), "no slice's sums to combine"),
    (lambda: combine.combine_maxima([np.zeros(3), np.zeros(4)]), "the slices' maxima differ in shape"),
    (lambda: combine.combine_moments([3], [np.zeros(2)] * 2, [np.zeros(2)] * 2), "1 counts for 2 slices"),
    (lambda: combine.combine_moments([3, 0], [np.zeros(2)] * 2, [np.zeros(2)] * 2),
     "count of rows must be a positive integer, not 0"),
    (lambda: combine.combine_moments([3, 2], [np.zeros(2)] * 2, [np.zeros(2)]),
     "means and variances do not match"),
])
def test_bad_partials_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
