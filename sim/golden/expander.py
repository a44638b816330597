"""Golden model of the expander's reduction: the K GPUs' gradients summed in GPU-index
order, ((g0 + g1) + g2) + …, each addition an IEEE FP32 addition, then the library
optimizer's golden (:data:`matndp.sim.golden.kernels.GOLDENS`) on the sum."""

import numpy as np

from matndp.sim.golden.kernels import GOLDENS, add


__all__ = ["reduced_gradient", "reduction_golden"]


def reduced_gradient(grads):
    """The K gradients summed in GPU-index order."""
    if len(grads) < 2:
        raise ValueError(f"a reduction needs at least 2 gradients, not {len(grads)}")
    total = np.asarray(grads[0], dtype=np.float32)
    for grad in grads[1:]:
        total = add(total, np.asarray(grad, dtype=np.float32))
    return total


def reduction_golden(launch, grads, state):
    """{output tensor: values after the step} of ``launch``
    (:class:`~matndp.host.kernels.expander.ReductionLaunch`): the sum itself for the sum
    kernel."""
    total = reduced_gradient(grads)
    optimizer = launch.optimizer_launch
    if optimizer is None:
        return {"sum": total}
    outputs = GOLDENS[launch.optimizer]({"grad": total, **state}, dict(optimizer.params),
                                        dict(optimizer.problem))
    return {name: np.asarray(outputs[name], dtype=np.float32) for name in launch.output_tensors()}
