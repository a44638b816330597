"""A synthetic training trace of a given size, written in G10's trace format, for
benchmarks that must not depend on G10's files being present.

The iteration is a chain of ``layers`` layers: forward (one kernel per layer, writing an
activation and using a short-lived workspace), a loss, backward (an input-gradient and a
weight-gradient kernel per layer, reading the layer's activation from the forward pass,
so activations stay idle across most of the iteration, as in a CNN), then one
weight-update kernel per layer. ``skips`` extra tensors bridge layers some distance apart
(residual and squeeze-excitation paths). Sizes and kernel times are drawn from a seeded
generator, so the same arguments write the same files.
"""

from pathlib import Path

import numpy as np


__all__ = ["write_synthetic_g10"]

_SEPARATOR = "_" * 68


def write_synthetic_g10(directory, *, layers=579, skips=286, batch=1024,
                        activation_bytes=0.5e9, weight_bytes=1.9e6, seconds=133.0, seed=1):
    """Write ``kernels.config`` and ``cudnn<batch>.txt`` to ``directory``; return it.

    With the defaults: 4 × 579 + 3 = 2 319 kernels and 7 × 579 + 286 + 2 = 4 341 tensors
    (SENet-154 at batch 1 024 in G10's traces: 2 319 kernels, 4 341 tensors), a
    footprint of a few hundred GB and ``seconds`` of kernel time."""
    rng = np.random.default_rng(seed)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    names = iter(range(10**9))
    sizes = {}

    def tensor(size):
        name = f"tensor{next(names)}"
        sizes[name] = (0, int(size))
        return name

    def weight(size):
        name = tensor(size)
        sizes[name] = (1, sizes[name][1])
        return name

    page = 4096
    act = np.maximum(page, rng.lognormal(np.log(activation_bytes), 0.8, layers)).astype(np.int64)
    wgt = np.maximum(page, rng.lognormal(np.log(weight_bytes), 1.0, layers)).astype(np.int64)
    kernels = []                      # (name, inputs, outputs, work)

    data = tensor(act[0])
    kernels.append(("LoadData_A0", [], [data], act[0]))
    weights = [weight(w) for w in wgt]
    activations, upstream = [], data
    skip_at = {}
    skip_layers = rng.choice(layers - 8, size=skips, replace=False)
    for i in range(layers):
        out, workspace = tensor(act[i]), tensor(max(page, act[i] // 50))
        inputs = [weights[i], upstream]
        outputs = [out, workspace]
        if i in skip_layers:
            skip = tensor(max(page, act[i] // 4))
            outputs.append(skip)
            skip_at.setdefault(i + int(rng.integers(2, 8)), []).append(skip)
        inputs += skip_at.pop(i, [])
        kernels.append(("Conv2d_Forward", inputs, outputs, act[i]))
        activations.append(out)
        upstream = out
    gradient = tensor(act[-1])
    kernels.append(("makeLoss", [upstream], [gradient], act[-1] // 10))
    weight_gradients = []
    for i in reversed(range(layers)):
        below = activations[i - 1] if i else data
        d_input, d_weight = tensor(act[i - 1] if i else act[0]), tensor(wgt[i])
        ws_input, ws_weight = tensor(max(page, act[i] // 40)), tensor(max(page, act[i] // 40))
        kernels.append(("Conv2d_Backward_Input", [gradient, weights[i]], [d_input, ws_input], act[i]))
        kernels.append(("Conv2d_Backward_Weight", [gradient, below], [d_weight, ws_weight], act[i]))
        weight_gradients.append((i, d_weight))
        gradient = d_input
    for i, d_weight in sorted(weight_gradients):
        kernels.append(("Conv2d_Apply_Grad", [d_weight, weights[i]], [weights[i]], wgt[i] * 20))
    kernels.append(("Scale_Forward", [gradient], [gradient], act[0] // 10))

    work = np.array([k[3] for k in kernels], dtype=float)
    times_ms = work / work.sum() * seconds * 1e3
    lines = []
    for number, (name, inputs, outputs, _) in enumerate(kernels):
        lines += [f"Kernel ID: {number}, Name: {name}", "Parent Layer ID:0; Name:Synthetic",
                  f"Execution Time: {int(times_ms[number] * 1.2e6)}", "Input Tensors:"]
        lines += [_line(t, *sizes[t]) for t in inputs]
        lines.append("Output Tensors:")
        lines += [_line(t, *sizes[t]) for t in outputs]
        lines.append(_SEPARATOR)
    (directory / "kernels.config").write_text("\n".join(lines) + "\n")
    (directory / f"cudnn{batch}.txt").write_text(
        "".join(f"{k:04d} {t:.6f} ms\n" for k, t in enumerate(times_ms)))
    return directory


def _line(name, is_global, size):
    return f"{name} Is weight (global)?: {is_global}, Size in byte: {size}, Range:0--{size}"
