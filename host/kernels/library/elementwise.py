"""Element-wise kernels: activations and their gradients, scale, dropout with a given mask,
where, add and gradient accumulation (axpy); FP32 and their BF16 variants."""

import numpy as np

from matndp.host.kernels.library.bf16 import bf16_variant
from matndp.host.kernels.library.shapes import ELEMENTS, IN, OUT, STATE, fp32, per_element
from matndp.host.kernels.library.spec import (Access, DType, KernelSpec, LibraryError,
                                              ParamSpec, TensorSpec)


__all__ = ["KERNELS", "BF16_KERNELS"]


def _check_dropout(name, params):
    if not 0.0 <= params["p"] < 1.0:
        raise LibraryError(f"{name}: p must be in [0, 1), not {params['p']}")


def _dropout_scale(b):
    # PyTorch: noise.div_(1 − p), a float32 division of the kept 1.0 by float32(1 − p).
    return b.f32(np.float32(1.0) / np.float32(1.0 - b.params["p"]))


# MASK names the byte-enable special register, so dropout's mask is argument KEEP.
_DROPOUT_VALUES = {"SCALE": _dropout_scale, "KEEP": lambda b: b.address("mask")}

# A backward that is its forward's kernel on dy writes dx where the forward writes y.
_INTO_DX = {"Y": lambda b: b.address("dx")}


def _elementwise(name, source, summary, tensors, trigger, order, params=(), values=None,
                 check_params=KernelSpec.check_params):
    return KernelSpec(name, source, summary, ELEMENTS, tuple(tensors), tuple(params), trigger,
                      Access.WRITE, order, values=values or {}, ragged=True,
                      check_params=check_params)


def _bytes(name, layout):
    return TensorSpec(name, IN, DType.U8, per_element, layout)


KERNELS = (
    _elementwise("relu_fwd", "relu_fwd.s", "ReLU on the producer's writes of x",
                 [fp32("x", IN), fp32("y", OUT)], "x", "y = maximum(x, +0)"),
    _elementwise("relu_bwd", "relu_bwd.s", "ReLU gradient on the writes of dy",
                 [fp32("dy", IN), fp32("y", IN, layout="the forward output, like dy"),
                  fp32("dx", OUT)], "dy", "dx = (y <= 0) ? +0 : dy"),
    _elementwise("gelu_fwd", "gelu_fwd.s", "GELU (tanh form) on the producer's writes of x",
                 [fp32("x", IN), fp32("y", OUT)], "x",
                 "a = |x|·fma(x², f32(−2βκ), f32(−2β)); e = exp(a); "
                 "y = (x < 0 ? x·e : x) / (e + 1)"),
    _elementwise("gelu_bwd", "gelu_bwd.s", "GELU (tanh form) gradient on the writes of dy",
                 [fp32("dy", IN), fp32("x", IN, layout="the forward input, like dy"),
                  fp32("dx", OUT)], "dy",
                 "e as gelu_fwd; q = 1/(e + 1); σ = x < 0 ? e·q : q; "
                 "h = fma(x², f32(6βκ), f32(2β)); dx = dy·fma(((h·x)·(e·q)), q, σ)"),
    _elementwise("tanh_fwd", "tanh_fwd.s", "tanh on the producer's writes of x",
                 [fp32("x", IN), fp32("y", OUT)], "x",
                 "m = expm1(−2·min(|x|, 9.5)); y = (m / (−2 − m)) with the sign of x"),
    _elementwise("tanh_bwd", "tanh_bwd.s", "tanh gradient on the writes of dy",
                 [fp32("dy", IN), fp32("y", IN, layout="the forward output, like dy"),
                  fp32("dx", OUT)], "dy", "dx = dy·fma(−y, y, 1)"),
    _elementwise("scale_fwd", "scale.s", "multiplication by a constant on the writes of x",
                 [fp32("x", IN), fp32("y", OUT)], "x", "y = x·scale",
                 [ParamSpec("scale", 1.0, "the constant")]),
    _elementwise("scale_bwd", "scale.s", "scale gradient on the writes of dy",
                 [fp32("dy", IN), fp32("dx", OUT)], "dy", "dx = dy·scale",
                 [ParamSpec("scale", 1.0, "the forward's constant")], _INTO_DX),
    _elementwise("dropout_fwd", "dropout.s", "dropout with a given mask on the writes of x",
                 [fp32("x", IN), _bytes("mask", "one byte (0 or 1) per element of x"),
                  fp32("y", OUT)], "x", "y = x·(mask ? f32(1 / f32(1 − p)) : 0)",
                 [ParamSpec("p", 0.5, "drop probability, in [0, 1)")],
                 _DROPOUT_VALUES, _check_dropout),
    _elementwise("dropout_bwd", "dropout.s", "dropout gradient on the writes of dy",
                 [fp32("dy", IN), _bytes("mask", "the forward's mask, one byte per element"),
                  fp32("dx", OUT)], "dy", "dx = dy·(mask ? f32(1 / f32(1 − p)) : 0)",
                 [ParamSpec("p", 0.5, "the forward's drop probability")],
                 {**_DROPOUT_VALUES, **_INTO_DX}, _check_dropout),
    _elementwise("where_fwd", "where.s", "select by a condition on the writes of x",
                 [fp32("x", IN), _bytes("condition", "one byte (0 or 1) per element of x"),
                  fp32("y", OUT)], "x", "y = condition ? x : fill",
                 [ParamSpec("fill", float(np.finfo(np.float32).min),
                            "the value where the condition is 0")]),
    _elementwise("where_bwd", "where.s", "where gradient on the writes of dy",
                 [fp32("dy", IN), _bytes("condition", "the forward's condition"),
                  fp32("dx", OUT)], "dy", "dx = condition ? dy : +0",
                 values={"FILL": lambda b: b.f32(0.0), **_INTO_DX}),
    _elementwise("add", "add.s", "element-wise sum on the writes of a",
                 [fp32("a", IN), fp32("b", IN), fp32("y", OUT)], "a", "y = a + b"),
    _elementwise("axpy", "axpy.s", "gradient accumulation on the writes of a new gradient x",
                 [fp32("x", IN), fp32("y", STATE, layout="the accumulated gradient, like x")],
                 "x", "y = fma(x, alpha, y)", [ParamSpec("alpha", 1.0, "the factor of x")]),
)

_BY_NAME = {spec.name: spec for spec in KERNELS}

# The tensors each BF16 variant takes in BF16: activations and gradients (axpy's FP32
# accumulator stays FP32).
BF16_KERNELS = tuple(
    bf16_variant(_BY_NAME[name], tensors) for name, tensors in (
        ("relu_fwd", ("x", "y")), ("relu_bwd", ("dy", "y", "dx")), ("gelu_fwd", ("x", "y")),
        ("gelu_bwd", ("dy", "x", "dx")), ("tanh_fwd", ("x", "y")), ("tanh_bwd", ("dy", "y", "dx")),
        ("scale_fwd", ("x", "y")), ("scale_bwd", ("dy", "dx")), ("dropout_fwd", ("x", "y")),
        ("dropout_bwd", ("dy", "dx")), ("where_fwd", ("x", "y")), ("where_bwd", ("dy", "dx")),
        ("add", ("a", "b", "y")), ("axpy", ("x",)))
)
