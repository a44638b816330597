"""Golden model of the combination of the NDP slices' partial reductions, as the GPU's
combine kernel does it (docs/cosim.md, "Partial reductions across slices"): each slice's
partial statistics, read in slice order (slice 0 first) and combined in FP32, one slice
after another. The order is part of the result: FP32 addition is not associative.

The arithmetic is numpy's float32 through :mod:`matndp.sim.golden.kernels`' operations
(NaN canonical, as everywhere in the goldens); nothing here is shared with the RTL.
"""

import numpy as np

from matndp.sim.golden.kernels import add, div, maximum, mul, rsqrt, sub


__all__ = ["combine_sums", "combine_maxima", "combine_moments", "variance_from_invstd",
           "combine_bn_stats", "combine_bn_bwd_stats"]


def _in_slice_order(partials, what):
    partials = [np.asarray(partial, dtype=np.float32) for partial in partials]
    if not partials:
        raise ValueError(f"no slice's {what} to combine")
    shapes = {partial.shape for partial in partials}
    if len(shapes) != 1:
        raise ValueError(f"the slices' {what} differ in shape: {sorted(shapes)}")
    return partials


def combine_sums(partials):
    """Σ of the slices' partial sums, added in slice order in FP32:
    ((p0 + p1) + p2) + …"""
    partials = _in_slice_order(partials, "sums")
    total = partials[0]
    for partial in partials[1:]:
        total = add(total, partial)
    return total


def combine_maxima(partials):
    """The maximum of the slices' partial maxima in slice order (IEEE 754-2019 maximum: a
    NaN in any slice propagates)."""
    partials = _in_slice_order(partials, "maxima")
    total = partials[0]
    for partial in partials[1:]:
        total = maximum(total, partial)
    return total


def _check_counts(counts, slices):
    if len(counts) != slices:
        raise ValueError(f"{len(counts)} counts for {slices} slices' partials")
    for count in counts:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"a slice's count of rows must be a positive integer, not {count!r}")


def combine_moments(counts, means, variances):
    """Chan's parallel combination of the slices' (count, mean, population variance), in
    slice order: with n, mean, M2 = n·var of the slices so far and a slice's n_s, mean_s,
    var_s, δ = mean_s − mean; mean += δ·(n_s / (n + n_s)); M2 += n_s·var_s + δ²·(n·n_s /
    (n + n_s)); n += n_s. Each step in FP32 as written (the fractions of the counts
    rounded once). Returns ``(count, mean, variance)``, the variance M2 / n."""
    means = _in_slice_order(means, "means")
    variances = _in_slice_order(variances, "variances")
    if len(variances) != len(means) or means[0].shape != variances[0].shape:
        raise ValueError("the slices' means and variances do not match")
    _check_counts(counts, len(means))
    count, mean = int(counts[0]), means[0]
    squares = mul(variances[0], np.float32(count))
    for n_s, mean_s, var_s in zip(counts[1:], means[1:], variances[1:]):
        total = count + int(n_s)
        delta = sub(mean_s, mean)
        mean = add(mean, mul(delta, np.float32(int(n_s) / total)))
        spread = mul(mul(delta, delta), np.float32(count * int(n_s) / total))
        squares = add(add(squares, mul(var_s, np.float32(int(n_s)))), spread)
        count = total
    return count, mean, div(squares, np.float32(count))


def variance_from_invstd(invstd, eps):
    """A slice's population variance from its ``invstd`` = 1/√(var + eps):
    max(1/invstd² − eps, 0) in FP32 (a few units in the last place of var + eps off the
    variance the slice computed)."""
    invstd = np.asarray(invstd, dtype=np.float32)
    return maximum(sub(div(np.float32(1.0), mul(invstd, invstd)), np.float32(eps)), np.float32(0.0))


def combine_bn_stats(counts, means, invstds, eps):
    """The batch-norm statistics over every slice's rows from each slice's ``bn_stats``
    outputs (``mean``, ``invstd``) and its count of rows, in slice order: the variances
    recovered (:func:`variance_from_invstd`), combined by :func:`combine_moments`, and
    invstd = 1/√(var + eps) of the whole. Returns {"count", "mean", "var", "invstd"}."""
    variances = [variance_from_invstd(invstd, eps) for invstd in _in_slice_order(invstds, "invstds")]
    count, mean, var = combine_moments(counts, means, variances)
    return {"count": count, "mean": mean, "var": var, "invstd": rsqrt(add(var, np.float32(eps)))}


def combine_bn_bwd_stats(grad_weights, grad_biases):
    """The batch-norm backward reductions over every slice's rows from each slice's
    ``bn_bwd_stats`` outputs: grad_bias = Σ dy and grad_weight = Σ dy·(x − mean)·invstd are
    sums over rows (the forward's mean and invstd are the same on every slice), so each is
    the sum of the slices' in slice order. Returns {"grad_weight", "grad_bias"}."""
    return {"grad_weight": combine_sums(grad_weights), "grad_bias": combine_sums(grad_biases)}
