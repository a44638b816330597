"""Optimizer steps triggered by the writes of a gradient, in torch.optim's order of tensor
operations: Adam, AdamW, SGD with momentum; FP32, and BF16 gradients with FP32 param and
state (mixed precision), which also write the model's BF16 copy of the param."""

import numpy as np

from matndp.host.kernels.library.bf16 import bf16_variant
from matndp.host.kernels.library.shapes import ELEMENTS, IN, OUT, STATE, fp32
from matndp.host.kernels.library.spec import Access, Kind, KernelSpec, LibraryError, ParamSpec


__all__ = ["KERNELS", "BF16_KERNELS"]


_SIGN_BIT = 0x80000000


def _check_adam(name, params):
    for beta in ("beta1", "beta2"):
        if not 0.0 <= params[beta] < 1.0:
            raise LibraryError(f"{name}: {beta} must be in [0, 1), not {params[beta]}")
    for positive in ("lr", "eps", "weight_decay"):
        if params[positive] < 0.0:
            raise LibraryError(f"{name}: {positive} must be >= 0, not {params[positive]}")


def _check_sgd(name, params):
    if params["momentum"] <= 0.0:
        raise LibraryError(f"{name}: momentum must be > 0 (sgd_momentum keeps a momentum "
                           f"buffer), not {params['momentum']}")
    if params["lr"] < 0.0 or params["weight_decay"] < 0.0:
        raise LibraryError(f"{name}: lr and weight_decay must be >= 0")
    if params["nesterov"] and params["dampening"] != 0.0:
        raise LibraryError(f"{name}: Nesterov momentum requires zero dampening (as torch.optim.SGD)")


def _lerp_coefficient(beta1):
    """PyTorch's vectorized lerp_(end, w): fma(w, end − start, start) for |w| < 0.5,
    else fma(w − 1, end − start, end), w = float32(1 − beta1)."""
    weight = np.float32(1.0 - beta1)
    if abs(weight) < 0.5:
        return weight, False
    return np.float32(weight - np.float32(1.0)), True


def _bias_correction(b, beta):
    return 1 - b.params[beta] ** b.params["step"]


# The step's scalars as _single_tensor_adam computes them (Python floats), then the float32
# the tensor ops use.
_ADAM_VALUES = {
    "GRAD_SIGN": lambda b: _SIGN_BIT if b.params["maximize"] else 0,
    "LERP_WEIGHT": lambda b: b.f32(_lerp_coefficient(b.params["beta1"])[0]),
    "LERP_FROM_END": lambda b: int(_lerp_coefficient(b.params["beta1"])[1]),
    "ONE_MINUS_BETA2": lambda b: b.f32(1 - b.params["beta2"]),
    "BC2_SQRT": lambda b: b.f32(_bias_correction(b, "beta2") ** 0.5),
    "NEG_STEP_SIZE": lambda b: b.f32(-(b.params["lr"] / _bias_correction(b, "beta1"))),
    "DECAY_ON": lambda b: b.flag(b.params["weight_decay"] != 0),
    # AdamW's decoupled decay
    "DECAY": lambda b: b.f32(1 - b.params["lr"] * b.params["weight_decay"]
                             if b.params["weight_decay"] != 0 else 1.0),
}

_SGD_VALUES = {
    "GRAD_SIGN": _ADAM_VALUES["GRAD_SIGN"],
    "DECAY_ON": _ADAM_VALUES["DECAY_ON"],
    "ONE_MINUS_DAMPENING": lambda b: b.f32(1 - b.params["dampening"]),
    "FIRST_STEP": lambda b: b.flag(b.params["step"] == 1),
    "NESTEROV": lambda b: b.flag(b.params["nesterov"]),
    "NEG_LR": lambda b: b.f32(-b.params["lr"]),
}

_ADAM_PARAMS = (
    ParamSpec("lr", 1e-3, "learning rate"),
    ParamSpec("beta1", 0.9, "first-moment decay"),
    ParamSpec("beta2", 0.999, "second-moment decay"),
    ParamSpec("eps", 1e-8, "added to the denominator"),
    ParamSpec("weight_decay", 0.0, "L2 penalty (Adam) or decoupled decay (AdamW)"),
    ParamSpec("step", 1, "this step's number, 1 for the first (PyTorch's state['step'] after += 1)",
              Kind.COUNT),
    ParamSpec("maximize", False, "maximize the objective", Kind.BOOL),
)
_ADAMW_PARAMS = tuple(ParamSpec(p.name, 1e-2, p.doc) if p.name == "weight_decay" else p
                      for p in _ADAM_PARAMS)
_SGD_PARAMS = (
    ParamSpec("lr", 1e-3, "learning rate"),
    ParamSpec("momentum", 0.9, "momentum factor (> 0)"),
    ParamSpec("dampening", 0.0, "dampening for momentum"),
    ParamSpec("weight_decay", 0.0, "L2 penalty"),
    ParamSpec("nesterov", False, "Nesterov momentum", Kind.BOOL),
    ParamSpec("maximize", False, "maximize the objective", Kind.BOOL),
    ParamSpec("step", 1, "this step's number; step 1 starts the momentum buffer from the gradient",
              Kind.COUNT),
)

_ADAM_STATE = (fp32("grad", IN), fp32("param", STATE), fp32("exp_avg", STATE),
               fp32("exp_avg_sq", STATE))


def _kernel(name, summary, tensors, params, order, values, check_params):
    return KernelSpec(name, f"{name}.s", summary, ELEMENTS, tensors, params, "grad",
                      Access.WRITE, order, values=values, ragged=True, check_params=check_params)


KERNELS = (
    _kernel("adam", "an Adam step (torch.optim.Adam) on the writes of grad", _ADAM_STATE,
            _ADAM_PARAMS,
            "grad = maximize ? −grad : grad; if weight_decay: grad = fma(param, wd, grad); "
            "exp_avg = fma(w, grad − exp_avg, exp_avg) (w = f32(1 − beta1) < 0.5; else "
            "fma(w − 1, grad − exp_avg, grad)); exp_avg_sq = fma((1 − beta2)·grad, grad, "
            "exp_avg_sq·beta2); denom = √exp_avg_sq / f32(√(1 − beta2^step)) + eps; "
            "param = param + (f32(−lr/(1 − beta1^step))·exp_avg) / denom",
            _ADAM_VALUES, _check_adam),
    _kernel("adamw", "an AdamW step (torch.optim.AdamW) on the writes of grad", _ADAM_STATE,
            _ADAMW_PARAMS,
            "param = param·f32(1 − lr·weight_decay); grad = maximize ? −grad : grad; then "
            "adam without its weight-decay term", _ADAM_VALUES, _check_adam),
    _kernel("sgd_momentum", "an SGD step with momentum (torch.optim.SGD) on the writes of grad",
            (fp32("grad", IN), fp32("param", STATE), fp32("momentum_buffer", STATE)), _SGD_PARAMS,
            "grad = maximize ? −grad : grad; if weight_decay: grad = fma(param, wd, grad); "
            "buf = step 1 ? grad : fma(grad, 1 − dampening, buf·momentum); "
            "grad = nesterov ? fma(buf, momentum, grad) : buf; param = fma(grad, −lr, param)",
            _SGD_VALUES, _check_sgd),
)

BF16_KERNELS = tuple(
    bf16_variant(base, ("grad", "param_bf16"), tensors=base.tensors + (
        fp32("param_bf16", OUT, layout="the updated param rounded to BF16 (the model's copy)"),),
        summary=f"{base.summary}, BF16 gradient, FP32 param and state",
        order=base.order + "; the gradient widened exactly; param_bf16 = bf16(param)")
    for base in KERNELS)
