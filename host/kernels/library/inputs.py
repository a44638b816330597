"""Random tensors for a kernel launch, reproducible from a seed: what ``matndp kernel run``,
the RTL runner and the library's tests feed a kernel. Element-wise kernels' triggering
tensors get the special values (signed zeros, infinities, NaN, subnormals, the extremes)
in some lanes; tensors a kernel needs positive (variances, scales) are positive."""

import numpy as np

from matndp.host.kernels.fp32 import to_bf16
from matndp.host.kernels.library import optimizers
from matndp.host.kernels.library.spec import LANES, DType, Role


__all__ = ["random_inputs", "SPECIALS"]


# Values every element-wise kernel meets in some lanes: zeros of both signs, infinities,
# NaN, subnormals, the largest finite values.
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3e38, -3e38, 1e-20,
                     -7.5, 12.0], dtype=np.float32)
POSITIVE = {"exp_avg_sq", "invstd", "rstd", "running_var", "weight", "inv_rows"}


_OPTIMIZERS = {spec.name for spec in optimizers.KERNELS + optimizers.BF16_KERNELS}


def _is_elementwise(spec):
    return spec.order_independent and spec.name not in _OPTIMIZERS


def _fp32_values(launch, spec, rng):
    if spec.row_sectors:
        per_row = rng.standard_normal((launch.problem["rows"], spec.row_sectors)).astype(np.float32)
        if spec.name in POSITIVE:
            per_row = np.abs(per_row)
        return np.repeat(per_row[:, :, None], LANES, axis=2).reshape(-1)
    values = rng.standard_normal(launch.elements(spec.name)).astype(np.float32)
    if spec.name in POSITIVE:
        values = np.abs(values) + np.float32(0.5)
    if launch.kernel.name.startswith("softmax_scale"):
        values = np.abs(values)
    if _is_elementwise(launch.kernel) and spec.name == launch.trigger and values.size >= 16:
        values[rng.choice(values.size, SPECIALS.size, replace=False)] = SPECIALS
    return values


def random_inputs(launch, seed):
    """Random values for every tensor a launch reads (seeded)."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for spec in launch.tensors:
        if spec.role is Role.OUTPUT:
            continue
        if spec.dtype is DType.U8:
            inputs[spec.name] = rng.integers(0, 2, launch.elements(spec.name)).astype(np.uint8)
        elif spec.dtype is DType.BF16:
            inputs[spec.name] = to_bf16(_fp32_values(launch, spec, rng).view(np.uint32)).astype(np.uint16)
        else:
            inputs[spec.name] = _fp32_values(launch, spec, rng)
    return inputs
