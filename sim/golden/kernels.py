"""Golden models of the NDP kernel library (``host/kernels/library``), written from each
kernel's mathematical definition in the operation order docs/kernels.md states — not from
the assembly. FP32 arithmetic is numpy's float32 (IEEE add, subtract, multiply, divide,
square root) and MPFR through gmpy2 for every fused multiply-add, so nothing here shares
code with the instruction-set simulator. As the engine does, every NaN an FP operation
produces is the canonical 0x7FC00000; BF16 rounding is MPFR's (``sim.golden.fp``).

A golden takes ``inputs`` ({tensor name: numpy array}, BF16 as uint16 bit patterns),
``params`` (the kernel's parameters, defaults filled in), ``problem`` ({dim: size}),
``order`` (the trigger order of the trigger tensor's sectors, for reductions) and
``partials`` (the number K of partials each accumulator is split into), and returns
{output name: array}.
"""

import math

import gmpy2
import numpy as np

from matndp.hw.config import NDPConfig
from matndp.host.kernels.library import BF16_TENSORS
from matndp.sim.golden.fp import reference


__all__ = ["GOLDENS", "exp_nonpositive", "tanh", "add", "sub", "mul", "div", "fma", "sqrt",
           "maximum", "minimum", "to_bf16", "from_bf16"]


_CANONICAL_NAN = np.uint32(0x7FC00000)
_SIGN = np.uint32(0x80000000)
_LANES = NDPConfig().lanes


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def _canonical(x):
    x = _f32(x)
    return np.where(np.isnan(x), _CANONICAL_NAN.view(np.float32), x).astype(np.float32)


def _bits(x):
    return np.ascontiguousarray(_f32(x)).view(np.uint32)


def _floats(bits):
    return np.ascontiguousarray(np.asarray(bits, dtype=np.uint32)).view(np.float32)


def add(a, b):
    with np.errstate(all="ignore"):
        return _canonical(_f32(a) + _f32(b))


def sub(a, b):
    with np.errstate(all="ignore"):
        return _canonical(_f32(a) - _f32(b))


def mul(a, b):
    with np.errstate(all="ignore"):
        return _canonical(_f32(a) * _f32(b))


def div(a, b):
    with np.errstate(all="ignore"):
        return _canonical(_f32(a) / _f32(b))


def sqrt(a):
    with np.errstate(all="ignore"):
        return _canonical(np.sqrt(_f32(a)))


_BINARY32 = gmpy2.ieee(32)


def fma(a, b, c):
    """a·b + c rounded once (MPFR in binary32)."""
    a, b, c = np.broadcast_arrays(_f32(a), _f32(b), _f32(c))
    shape = a.shape
    with gmpy2.context(_BINARY32):
        out = [float(gmpy2.fma(x, y, z)) for x, y, z in
               zip(a.reshape(-1).tolist(), b.reshape(-1).tolist(), c.reshape(-1).tolist())]
    return _canonical(np.array(out, dtype=np.float64).astype(np.float32).reshape(shape))


def _negative_sign(x):
    return (_bits(x) >> 31).astype(bool)


def maximum(a, b):
    """IEEE 754-2019 maximum: NaN propagates, +0 above −0."""
    a, b = np.broadcast_arrays(_f32(a), _f32(b))
    take_a = (a > b) | ((a == b) & ~_negative_sign(a))
    out = np.where(take_a, a, b)
    return np.where(np.isnan(a) | np.isnan(b), _CANONICAL_NAN.view(np.float32), out).astype(np.float32)


def minimum(a, b):
    a, b = np.broadcast_arrays(_f32(a), _f32(b))
    take_a = (a < b) | ((a == b) & _negative_sign(a))
    out = np.where(take_a, a, b)
    return np.where(np.isnan(a) | np.isnan(b), _CANONICAL_NAN.view(np.float32), out).astype(np.float32)


def negative(a):
    return _canonical(_floats(_bits(a) ^ _SIGN))


def absolute(a):
    return _canonical(_floats(_bits(a) & ~_SIGN))


def rsqrt(a):
    return div(np.float32(1.0), sqrt(a))


def _scalar(value):
    return np.float32(value)


def to_bf16(a):
    """FP32 → BF16 bit patterns (uint16), to nearest even (MPFR)."""
    return reference("f32_to_bf16", _bits(a).reshape(-1)).astype(np.uint16).reshape(np.shape(a))


def from_bf16(a):
    """BF16 bit patterns → FP32, exact."""
    a = np.asarray(a, dtype=np.uint16)
    return _floats(reference("bf16_to_f32", a.reshape(-1).astype(np.uint32))).reshape(a.shape)


def _pairwise(x, function):
    """Reduce the last axis (8 lanes) in the engine's tree: (0+1), (2+3), …, pairwise."""
    while x.shape[-1] > 1:
        x = function(x[..., 0::2], x[..., 1::2])
    return x[..., 0]


# The library's exponential -------------------------------------------------------------

_LOG2E = np.float32(1.0 / math.log(2.0))
_LN2_HI = np.float32(math.log(2.0))
_LN2_LO = np.float32(math.log(2.0) - float(_LN2_HI))
_EXP_MAGIC = np.float32(1.5 * 2 ** 23 + 191)
# p(r) ≈ e^r on |r| <= ln2/2, degree 5 (fitted for binary32 evaluation), each ×2^-64.
_EXP_COEFFICIENTS = tuple(np.float32(c) * np.float32(2.0 ** -64) for c in (
    1.0, 0.9999997019767761, 0.49999144673347473, 0.1666763573884964,
    0.04189838841557503, 0.008290229365229607))


def exp_nonpositive(a):
    """e^a for a <= 0 (NaN to NaN): Cody–Waite reduction a = n·ln2 + r with
    n = round(a·log2 e) from the rounding of an FMA against 1.5·2^23 + 191,
    r = (a − n·ln2_hi) − n·ln2_lo; p(r)·2^-64 by Horner; e^a = p · 2^(n+64), where
    2^(n+64) is t's bit pattern shifted left by 23 (its low 9 bits are n + 191), so
    that results down to the smallest subnormal round once. a is clamped to −120."""
    a = maximum(a, np.float32(-120.0))
    t = fma(a, _LOG2E, _EXP_MAGIC)
    n = sub(t, _EXP_MAGIC)
    r = fma(negative(n), _LN2_HI, a)
    r = fma(negative(n), _LN2_LO, r)
    c = _EXP_COEFFICIENTS
    p = fma(r, c[5], c[4])
    for coefficient in (c[3], c[2], c[1], c[0]):
        p = fma(p, r, coefficient)
    scale = _floats((_bits(t) << np.uint32(23)).astype(np.uint32))
    return mul(p, scale)


_EXPM1_MAGIC = np.float32(1.5 * 2 ** 23 + 384)
# q(r) ≈ (e^r − 1 − r)/r² on |r| <= ln2/2, degree 4; Q_k = −2·(−2)^k·q_k (u = −r/2).
_EXPM1_Q = tuple(np.float32(-2.0 * (-2.0) ** k) * np.float32(c) for k, c in enumerate((
    0.5, 0.16666576266288757, 0.04166685417294502, 0.008363200351595879,
    0.0013901309575885534)))


def tanh(x):
    """tanh x = sign(x)·(m / (−2 − m)), m = expm1(−2·min(|x|, 9.5)) computed as
    S·m'' − (1 − s): −2|x| = n·ln2 + r, u = −r/2 = |x| + n·ln2_hi/2 + n·ln2_lo/2,
    m'' = u + u²·Q(u), s = 2^n and S = −2s (t's bits shifted left by 23)."""
    ax = minimum(absolute(x), np.float32(9.5))
    t = fma(ax, np.float32(-2.0) * _LOG2E, _EXPM1_MAGIC)
    n = sub(t, _EXPM1_MAGIC)
    u = fma(n, _LN2_HI / np.float32(2.0), ax)
    u = fma(n, _LN2_LO / np.float32(2.0), u)
    uu = mul(u, u)
    q = _EXPM1_Q
    poly = fma(u, q[4], q[3])
    for coefficient in (q[2], q[1], q[0]):
        poly = fma(poly, u, coefficient)
    m2 = fma(uu, poly, u)
    big_s = _floats((_bits(t) << np.uint32(23)).astype(np.uint32))
    one_minus_s = fma(big_s, np.float32(0.5), np.float32(1.0))
    m = fma(big_s, m2, negative(one_minus_s))
    y = div(m, sub(np.float32(-2.0), m))
    return _floats(_bits(y) | (_bits(x) & _SIGN))


# GELU, tanh form: β = f32(√(2/π)) (PyTorch's kBeta), κ = f32(0.044715); the kernels'
# constants are these products rounded once.
_BETA = np.float32(math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5)
_KAPPA = np.float32(0.044715)
_NEG_2BETA = np.float32(-2.0 * float(_BETA))
_NEG_2BETA_KAPPA = np.float32(-2.0 * float(_BETA) * float(_KAPPA))
_TWO_BETA = np.float32(2.0 * float(_BETA))
_SIX_BETA_KAPPA = np.float32(6.0 * float(_BETA) * float(_KAPPA))


def _gelu_exp(x):
    """e = exp(−2|z|), z = β(x + κx³), and x²."""
    square = mul(x, x)
    a = mul(absolute(x), fma(square, _NEG_2BETA_KAPPA, _NEG_2BETA))
    return exp_nonpositive(a), square


def gelu(x):
    e, _ = _gelu_exp(x)
    numerator = np.where(x < 0, mul(x, e), x)
    return div(numerator, add(e, np.float32(1.0)))


def gelu_derivative(x):
    e, square = _gelu_exp(x)
    q = div(np.float32(1.0), add(e, np.float32(1.0)))
    eq = mul(e, q)
    sigma = np.where(x < 0, eq, q)
    h = fma(square, _SIX_BETA_KAPPA, _TWO_BETA)
    return fma(mul(mul(h, x), eq), q, sigma)


# Element-wise goldens ------------------------------------------------------------------

def _elementwise(function):
    def golden(inputs, params, problem, order=None, partials=1):
        return function(inputs, params)
    return golden


def _dropout_scale(p):
    # torch: noise = mask / (1 − p), a float32 division.
    return np.float32(1.0) / np.float32(1.0 - p)


def _dropout(inputs, params, source, out):
    keep = np.where(inputs["mask"] & 1, _dropout_scale(params["p"]), np.float32(0.0))
    return {out: mul(inputs[source], keep)}


def _where(inputs, source, out, fill):
    return {out: np.where(inputs["condition"] & 1, _f32(inputs[source]), np.float32(fill))}


_SIMPLE = {
    "relu_fwd": lambda i, p: {"y": maximum(i["x"], np.float32(0.0))},
    "relu_bwd": lambda i, p: {"dx": np.where(i["y"] <= 0, np.float32(0.0), i["dy"]).astype(np.float32)},
    "gelu_fwd": lambda i, p: {"y": gelu(i["x"])},
    "gelu_bwd": lambda i, p: {"dx": mul(i["dy"], gelu_derivative(i["x"]))},
    "tanh_fwd": lambda i, p: {"y": tanh(i["x"])},
    "tanh_bwd": lambda i, p: {"dx": mul(i["dy"], fma(negative(i["y"]), i["y"], np.float32(1.0)))},
    "scale_fwd": lambda i, p: {"y": mul(i["x"], _scalar(p["scale"]))},
    "scale_bwd": lambda i, p: {"dx": mul(i["dy"], _scalar(p["scale"]))},
    "dropout_fwd": lambda i, p: _dropout(i, p, "x", "y"),
    "dropout_bwd": lambda i, p: _dropout(i, p, "dy", "dx"),
    "where_fwd": lambda i, p: _where(i, "x", "y", p["fill"]),
    "where_bwd": lambda i, p: _where(i, "dy", "dx", 0.0),
    "add": lambda i, p: {"y": add(i["a"], i["b"])},
    "axpy": lambda i, p: {"y": fma(i["x"], _scalar(p["alpha"]), i["y"])},
}


def _bias_relu(inputs, params, problem, order=None, partials=1):
    x = _f32(inputs["x"]).reshape(problem["rows"], problem["channels"])
    return {"y": maximum(add(x, inputs["bias"][None, :]), np.float32(0.0)).reshape(-1)}


# Optimizers: PyTorch's single-tensor order, scalars as Python floats then float32 ----------

def _lerp(start, end, weight):
    weight = np.float32(weight)
    if abs(weight) < 0.5:
        return fma(weight, sub(end, start), start)
    return fma(sub(weight, np.float32(1.0)), sub(end, start), end)


def _adam_moments(grad, param, exp_avg, exp_avg_sq, p):
    exp_avg = _lerp(exp_avg, grad, 1 - p["beta1"])
    # addcmul_(grad, grad, value): self + (value·grad)·grad, the last multiply-add fused
    # as PyTorch's compiled CPU kernel evaluates it
    exp_avg_sq = fma(mul(_scalar(1 - p["beta2"]), grad), grad, mul(exp_avg_sq, _scalar(p["beta2"])))
    step = p["step"]
    step_size = p["lr"] / (1 - p["beta1"] ** step)
    bias_correction2_sqrt = (1 - p["beta2"] ** step) ** 0.5
    denom = add(div(sqrt(exp_avg_sq), _scalar(bias_correction2_sqrt)), _scalar(p["eps"]))
    param = add(param, div(mul(_scalar(-step_size), exp_avg), denom))
    return {"param": param, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}


def _maximize(grad, p):
    return negative(grad) if p["maximize"] else _f32(grad)


def _adam(inputs, p, problem=None, order=None, partials=1):
    grad = _maximize(inputs["grad"], p)
    if p["weight_decay"] != 0:
        grad = fma(inputs["param"], _scalar(p["weight_decay"]), grad)
    return _adam_moments(grad, _f32(inputs["param"]), inputs["exp_avg"], inputs["exp_avg_sq"], p)


def _adamw(inputs, p, problem=None, order=None, partials=1):
    param = _f32(inputs["param"])
    if p["weight_decay"] != 0:
        param = mul(param, _scalar(1 - p["lr"] * p["weight_decay"]))
    grad = _maximize(inputs["grad"], p)
    return _adam_moments(grad, param, inputs["exp_avg"], inputs["exp_avg_sq"], p)


def _sgd(inputs, p, problem=None, order=None, partials=1):
    grad = _maximize(inputs["grad"], p)
    param = _f32(inputs["param"])
    if p["weight_decay"] != 0:
        grad = fma(param, _scalar(p["weight_decay"]), grad)
    if p["step"] == 1:
        buf = grad
    else:
        buf = fma(grad, _scalar(1 - p["dampening"]), mul(inputs["momentum_buffer"], _scalar(p["momentum"])))
    update = fma(buf, _scalar(p["momentum"]), grad) if p["nesterov"] else buf
    return {"param": fma(update, _scalar(-p["lr"]), param), "momentum_buffer": buf}


# Reductions: accumulation in trigger order ---------------------------------------------

def _sector_order(order, count):
    return range(count) if order is None else [int(s) for s in order]


def _channel_accumulate(values, weights, problem, order, partials, square):
    """Per partial j·C/8 + g: Σ values (and Σ values·weights by FMA when ``square``) over
    the sectors in trigger order, sector s updating partial s mod (K·C/8)."""
    sectors = _f32(values).reshape(-1, _LANES)
    other = _f32(weights).reshape(-1, _LANES)
    slots = partials * problem["channels"] // _LANES
    sums = np.zeros((slots, _LANES), np.float32)
    products = np.zeros((slots, _LANES), np.float32)
    for s in _sector_order(order, len(sectors)):
        slot = s % slots
        products[slot] = fma(sectors[s], other[s], products[slot])
        sums[slot] = add(sums[slot], sectors[s])
    return _combine_partials(sums, partials), _combine_partials(products, partials)


def _combine_partials(sums, partials):
    """(K·G, lanes) partials → (G·lanes,): partial 0 + partial 1 + … in ascending order."""
    sums = sums.reshape(partials, -1, _LANES)
    total = sums[0]
    for j in range(1, partials):
        total = add(total, sums[j])
    return total.reshape(-1)


def _bn_stats(inputs, p, problem, order=None, partials=1):
    total, squares = _channel_accumulate(inputs["x"], inputs["x"], problem, order, partials, True)
    count = np.float32(problem["rows"])
    mean = div(total, count)
    var = maximum(fma(negative(mean), mean, div(squares, count)), np.float32(0.0))
    invstd = rsqrt(add(var, _scalar(p["eps"])))
    scale = mul(inputs["weight"], invstd)
    shift = fma(negative(mean), scale, inputs["bias"])
    momentum = _scalar(p["momentum"])
    keep = sub(np.float32(1.0), momentum)
    unbiased = mul(var, div(count, sub(count, np.float32(1.0))))
    return {"mean": mean, "invstd": invstd, "scale": scale, "shift": shift,
            "running_mean": fma(mean, momentum, mul(inputs["running_mean"], keep)),
            "running_var": fma(unbiased, momentum, mul(inputs["running_var"], keep))}


def _per_channel(values, problem):
    return _f32(values).reshape(problem["rows"], problem["channels"])


def _bn_apply(inputs, p, problem, order=None, partials=1):
    x = _per_channel(inputs["x"], problem)
    return {"y": fma(x, inputs["scale"][None, :], inputs["shift"][None, :]).reshape(-1)}


def _bn_bwd_stats(inputs, p, problem, order=None, partials=1):
    total, dots = _channel_accumulate(inputs["dy"], inputs["x"], problem, order, partials, False)
    mean, invstd = _f32(inputs["mean"]), _f32(inputs["invstd"])
    count = np.float32(problem["rows"])
    dot = fma(negative(mean), total, dots)
    grad_weight = mul(dot, invstd)
    k = div(mul(grad_weight, invstd), count)
    a = mul(invstd, inputs["weight"])
    return {"grad_weight": grad_weight, "grad_bias": total, "coef_a": a,
            "coef_b": negative(mul(a, k)),
            "coef_c": mul(a, fma(k, mean, negative(div(total, count))))}


def _bn_bwd_apply(inputs, p, problem, order=None, partials=1):
    dy, x = _per_channel(inputs["dy"], problem), _per_channel(inputs["x"], problem)
    inner = fma(x, inputs["coef_b"][None, :], inputs["coef_c"][None, :])
    return {"dx": fma(dy, inputs["coef_a"][None, :], inner).reshape(-1)}


def _row_accumulate(values, weights, problem, order, partials, fused):
    """Per row and partial k: Σ values·weights (FMA) and Σ values over the row's sectors in
    trigger order, sector s updating partial s mod K; then partials in ascending order and
    the lanes pairwise. Returns (Σ values·weights, Σ values) per row."""
    sectors = _f32(values).reshape(-1, _LANES)
    other = _f32(weights).reshape(-1, _LANES) if weights is not None else None
    per_row = problem["columns"] // _LANES
    rows = problem["rows"]
    sums = np.zeros((rows, partials, _LANES), np.float32)
    products = np.zeros((rows, partials, _LANES), np.float32)
    for s in _sector_order(order, len(sectors)):
        row, partial = s // per_row, s % partials
        if fused:
            products[row, partial] = fma(sectors[s], other[s], products[row, partial])
        sums[row, partial] = add(sums[row, partial], sectors[s])

    def reduce(per_partial):
        total = per_partial[:, 0]
        for k in range(1, partials):
            total = add(total, per_partial[:, k])
        return _pairwise(total, add)
    return reduce(products), reduce(sums)


def _broadcast_rows(*columns):
    """Per row, each value broadcast to a sector, one sector after the other."""
    return np.stack([np.repeat(_f32(c)[:, None], _LANES, axis=1) for c in columns], axis=1).reshape(-1)


def _per_row(values, problem):
    return _f32(values).reshape(problem["rows"], problem["columns"])


def _layernorm_stats(inputs, p, problem, order=None, partials=1):
    squares, total = _row_accumulate(inputs["x"], inputs["x"], problem, order, partials, True)
    length = np.float32(problem["columns"])
    mean = div(total, length)
    var = maximum(fma(negative(mean), mean, div(squares, length)), np.float32(0.0))
    rstd = rsqrt(add(var, _scalar(p["eps"])))
    return {"mean": mean, "rstd": rstd, "row_coefs": _broadcast_rows(rstd, negative(mul(mean, rstd)))}


def _row_coefficients(values, problem, count):
    return _f32(values).reshape(problem["rows"], count, _LANES)[:, :, 0]


def _layernorm_apply(inputs, p, problem, order=None, partials=1):
    coefs = _row_coefficients(inputs["row_coefs"], problem, 2)
    x = _per_row(inputs["x"], problem)
    xhat = fma(x, coefs[:, 0:1], coefs[:, 1:2])
    return {"y": fma(xhat, inputs["weight"][None, :], inputs["bias"][None, :]).reshape(-1)}


def _layernorm_bwd_stats(inputs, p, problem, order=None, partials=1):
    g = mul(_per_row(inputs["dy"], problem), inputs["weight"][None, :]).reshape(-1)
    ds, db = _row_accumulate(g, inputs["x"], problem, order, partials, True)
    mean, a = _f32(inputs["mean"]), _f32(inputs["rstd"])
    inv_length = np.float32(1.0) / np.float32(problem["columns"])
    b = fma(db, mean, negative(ds))
    for _ in range(3):
        b = mul(b, a)
    b = mul(b, inv_length)
    c = fma(negative(b), mean, negative(mul(mul(db, a), inv_length)))
    return {"row_coefs": _broadcast_rows(a, b, c, negative(mul(mean, a)))}


def _layernorm_bwd_apply(inputs, p, problem, order=None, partials=1):
    coefs = _row_coefficients(inputs["row_coefs"], problem, 4)
    a, b, c, m = (coefs[:, k:k + 1] for k in range(4))
    dy, x = _per_row(inputs["dy"], problem), _per_row(inputs["x"], problem)
    g = mul(dy, inputs["weight"][None, :])
    dx = fma(g, a, fma(x, b, c))
    xhat = fma(x, a, m)
    per_row = problem["columns"] // _LANES
    grad_weight = np.zeros((per_row, _LANES), np.float32)
    grad_bias = np.zeros((per_row, _LANES), np.float32)
    dy_sectors, xhat_sectors = dy.reshape(-1, _LANES), xhat.reshape(-1, _LANES)
    for s in _sector_order(order, len(dy_sectors)):
        column = s % per_row
        grad_weight[column] = fma(dy_sectors[s], xhat_sectors[s], grad_weight[column])
        grad_bias[column] = add(grad_bias[column], dy_sectors[s])
    return {"dx": dx.reshape(-1), "grad_weight": grad_weight.reshape(-1),
            "grad_bias": grad_bias.reshape(-1)}


def _softmax_max(inputs, p, problem, order=None, partials=1):
    x = _per_row(inputs["x"], problem).reshape(problem["rows"], -1, _LANES)
    lanes = x[:, 0]
    for k in range(1, x.shape[1]):
        lanes = maximum(lanes, x[:, k])
    return {"max_rows": _broadcast_rows(_pairwise(lanes, maximum))}


def _row_values(values, problem):
    return _f32(values).reshape(problem["rows"], _LANES)[:, :1]


def _softmax_expsum(inputs, p, problem, order=None, partials=1):
    x = _per_row(inputs["x"], problem)
    e = exp_nonpositive(sub(x, _row_values(inputs["max_rows"], problem)))
    _, total = _row_accumulate(e.reshape(-1), None, problem, order, 1, False)
    return {"y": e.reshape(-1), "inv_rows": _broadcast_rows(div(np.float32(1.0), total))}


def _softmax_scale(inputs, p, problem, order=None, partials=1):
    e = _per_row(inputs["y"], problem)
    return {"y": mul(e, _row_values(inputs["inv_rows"], problem)).reshape(-1)}


def _softmax_bwd_dot(inputs, p, problem, order=None, partials=1):
    dots, _ = _row_accumulate(inputs["dy"], inputs["y"], problem, order, partials, True)
    return {"dot_rows": _broadcast_rows(dots)}


def _softmax_bwd_apply(inputs, p, problem, order=None, partials=1):
    dy, y = _per_row(inputs["dy"], problem), _per_row(inputs["y"], problem)
    return {"dx": mul(sub(dy, _row_values(inputs["dot_rows"], problem)), y).reshape(-1)}


GOLDENS = {
    **{name: _elementwise(function) for name, function in _SIMPLE.items()},
    "bias_relu": _bias_relu,
    "bn_stats": _bn_stats,
    "bn_apply": _bn_apply,
    "bn_bwd_stats": _bn_bwd_stats,
    "bn_bwd_apply": _bn_bwd_apply,
    "layernorm_stats": _layernorm_stats,
    "layernorm_apply": _layernorm_apply,
    "layernorm_bwd_stats": _layernorm_bwd_stats,
    "layernorm_bwd_apply": _layernorm_bwd_apply,
    "softmax_max": _softmax_max,
    "softmax_expsum": _softmax_expsum,
    "softmax_scale": _softmax_scale,
    "softmax_bwd_dot": _softmax_bwd_dot,
    "softmax_bwd_apply": _softmax_bwd_apply,
    "adam": _adam,
    "adamw": _adamw,
    "sgd_momentum": _sgd,
}


# BF16 variants ----------------------------------------------------------------------------
# Activations and gradients in BF16, everything else FP32: a BF16 kernel widens its inputs
# (exactly), computes as its FP32 kernel and rounds each BF16 result once. Reductions over
# channels accumulate a BF16 sector's halves as the FP32 kernel does the widened tensor's
# sectors 2s and 2s+1; reductions along rows first combine the halves of a sector.

def _widened_order(order, count):
    if order is None:
        return None
    return [2 * s + half for s in order for half in (0, 1)]


def _bf16_variant(function, bf16_inputs, bf16_outputs):
    def golden(inputs, params, problem, order=None, partials=1):
        widened = {name: from_bf16(values) if name in bf16_inputs else values
                   for name, values in inputs.items()}
        sectors = None if order is None else len(order)
        outputs = function(widened, params, problem, order=_widened_order(order, sectors),
                           partials=partials)
        return {name: to_bf16(values) if name in bf16_outputs else values
                for name, values in outputs.items()}
    return golden


def _halves(values):
    """(sectors, 2, 8): each BF16 sector's elements 0 … 7 and 8 … 15."""
    return _f32(values).reshape(-1, 2, _LANES)


def _row_accumulate_bf16(terms, problem, order, partials):
    """Per row and partial k: Σ terms over the row's BF16 sectors in trigger order (sector s
    updating partial s mod K); then partials in ascending order and the lanes pairwise."""
    per_row = problem["columns"] // (2 * _LANES)
    sums = np.zeros((problem["rows"], partials, _LANES), np.float32)
    for s in _sector_order(order, len(terms)):
        row, partial = s // per_row, s % partials
        sums[row, partial] = add(sums[row, partial], terms[s])
    total = sums[:, 0]
    for k in range(1, partials):
        total = add(total, sums[:, k])
    return _pairwise(total, add)


def _layernorm_stats_bf16(inputs, p, problem, order=None, partials=1):
    x = _halves(from_bf16(inputs["x"]))
    squares = _row_accumulate_bf16(fma(x[:, 1], x[:, 1], mul(x[:, 0], x[:, 0])), problem, order, partials)
    total = _row_accumulate_bf16(add(x[:, 0], x[:, 1]), problem, order, partials)
    length = np.float32(problem["columns"])
    mean = div(total, length)
    var = maximum(fma(negative(mean), mean, div(squares, length)), np.float32(0.0))
    rstd = rsqrt(add(var, _scalar(p["eps"])))
    return {"mean": mean, "rstd": rstd, "row_coefs": _broadcast_rows(rstd, negative(mul(mean, rstd)))}


def _layernorm_bwd_stats_bf16(inputs, p, problem, order=None, partials=1):
    g = _halves(mul(_per_row(from_bf16(inputs["dy"]), problem), inputs["weight"][None, :]))
    x = _halves(from_bf16(inputs["x"]))
    ds = _row_accumulate_bf16(fma(g[:, 1], x[:, 1], mul(g[:, 0], x[:, 0])), problem, order, partials)
    db = _row_accumulate_bf16(add(g[:, 0], g[:, 1]), problem, order, partials)
    mean, a = _f32(inputs["mean"]), _f32(inputs["rstd"])
    inv_length = np.float32(1.0) / np.float32(problem["columns"])
    b = fma(db, mean, negative(ds))
    for _ in range(3):
        b = mul(b, a)
    b = mul(b, inv_length)
    c = fma(negative(b), mean, negative(mul(mul(db, a), inv_length)))
    return {"row_coefs": _broadcast_rows(a, b, c, negative(mul(mean, a)))}


def _softmax_expsum_bf16(inputs, p, problem, order=None, partials=1):
    x = _per_row(from_bf16(inputs["x"]), problem)
    e = exp_nonpositive(sub(x, _row_values(inputs["max_rows"], problem)))
    pairs = _halves(e)
    total = _row_accumulate_bf16(add(pairs[:, 0], pairs[:, 1]), problem, order, 1)
    return {"exps": e.reshape(-1), "inv_rows": _broadcast_rows(div(np.float32(1.0), total))}


def _softmax_scale_bf16(inputs, p, problem, order=None, partials=1):
    e = _per_row(inputs["exps"], problem)
    return {"y": to_bf16(mul(e, _row_values(inputs["inv_rows"], problem)).reshape(-1))}


def _softmax_bwd_dot_bf16(inputs, p, problem, order=None, partials=1):
    dy, y = _halves(from_bf16(inputs["dy"])), _halves(from_bf16(inputs["y"]))
    terms = fma(dy[:, 1], y[:, 1], mul(dy[:, 0], y[:, 0]))
    return {"dot_rows": _broadcast_rows(_row_accumulate_bf16(terms, problem, order, partials))}


def _optimizer_bf16(function):
    def golden(inputs, params, problem=None, order=None, partials=1):
        outputs = function({**inputs, "grad": from_bf16(inputs["grad"])}, params)
        return {**outputs, "param_bf16": to_bf16(outputs["param"])}
    return golden


# BF16 goldens of their own: the row reductions combine a sector's halves first, softmax
# keeps FP32 exponentials, the optimizers write the param's BF16 copy.
_OWN_BF16 = {
    "layernorm_stats_bf16": _layernorm_stats_bf16,
    "layernorm_bwd_stats_bf16": _layernorm_bwd_stats_bf16,
    "softmax_expsum_bf16": _softmax_expsum_bf16,
    "softmax_scale_bf16": _softmax_scale_bf16,
    "softmax_bwd_dot_bf16": _softmax_bwd_dot_bf16,
    "adam_bf16": _optimizer_bf16(_adam),
    "adamw_bf16": _optimizer_bf16(_adamw),
    "sgd_momentum_bf16": _optimizer_bf16(_sgd),
}
# Every other BF16 variant is its FP32 golden on the widened tensors, each BF16 result
# rounded once; which tensors are BF16 is the library's declaration.
GOLDENS.update({f"{name}_bf16": _bf16_variant(GOLDENS[name], tensors, tensors)
                for name, tensors in BF16_TENSORS.items() if f"{name}_bf16" not in _OWN_BF16})
GOLDENS.update(_OWN_BF16)
