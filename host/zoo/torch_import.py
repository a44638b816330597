"""Import a PyTorch model's training iteration when torch is installed (optional).

The model is traced with ``torch.fx`` and its shapes propagated on meta tensors, so no
weights are allocated or downloaded (build the model with ``device="meta"`` or
``torch.device("meta")`` as a context manager for large ones). Supported layers map to the
same builder calls as the hand-written zoo; anything else is refused by name rather than
silently dropped. A classification cross-entropy loss is attached to a 2-D output, a
mean-squared-error-like loss (kind ``loss``) otherwise.
"""

import copy
import operator

from .builder import GraphBuilder


__all__ = ["import_module_graph"]


def _pair(value):
    return value if isinstance(value, int) else value[0] if len(set(value)) == 1 else None


def _conv(b, name, module, x):
    kernel, stride, padding = (_pair(module.kernel_size), _pair(module.stride),
                               _pair(module.padding))
    if None in (kernel, stride, padding) or module.groups != 1 or _pair(module.dilation) != 1:
        raise ValueError(f"{name}: only square, ungrouped, undilated Conv2d is supported")
    return b.conv2d(name, x, module.out_channels, kernel, stride, padding,
                    bias=module.bias is not None)


def import_module_graph(module, input_shape, *, name=None, dtype="fp32", optimizer="adamw"):
    """The training iteration of the PyTorch ``module`` on inputs of ``input_shape`` (batch
    first), as an :class:`~matndp.host.graph.IterationGraph` named ``name`` (default the
    module's class name). Needs torch; a layer or function it cannot map is a ValueError
    naming it. ``dtype`` and ``optimizer`` are those of
    :class:`~matndp.host.zoo.builder.GraphBuilder`."""
    import torch
    import torch.fx
    from torch import nn
    from torch.fx.passes.shape_prop import ShapeProp

    if any(parameter.device.type != "meta" for parameter in module.parameters()):
        # Shapes are propagated on meta tensors; a model built with real weights is copied
        # to the meta device first (the copy holds no data).
        module = copy.deepcopy(module).to("meta")
    traced = torch.fx.symbolic_trace(module)
    ShapeProp(traced).propagate(torch.empty(input_shape, device="meta"))
    b = GraphBuilder(name or type(module).__name__, batch=input_shape[0], dtype=dtype,
                     optimizer=optimizer)
    env, flattened = {}, set()

    def arg(node):
        return env[node.name]

    for node in traced.graph.nodes:
        label = node.target if isinstance(node.target, str) else node.name
        if node.op == "placeholder":
            env[node.name] = b.input(node.name, tuple(input_shape))
        elif node.op == "call_module":
            layer, x = traced.get_submodule(node.target), arg(node.args[0])
            if isinstance(layer, nn.Conv2d):
                out = _conv(b, label, layer, x)
            elif isinstance(layer, nn.Linear):
                out = b.linear(label, x, layer.out_features, bias=layer.bias is not None,
                               flatten=x in flattened)
            elif isinstance(layer, nn.BatchNorm2d):
                out = b.batchnorm(label, x)
            elif isinstance(layer, nn.LayerNorm):
                out = b.layernorm(label, x)
            elif isinstance(layer, nn.ReLU):
                out = b.relu(label, x)
            elif isinstance(layer, nn.GELU):
                out = b.gelu(label, x)
            elif isinstance(layer, nn.Tanh):
                out = b.tanh(label, x)
            elif isinstance(layer, nn.Dropout):
                out = b.dropout(label, x)
            elif isinstance(layer, nn.MaxPool2d):
                out = b.maxpool(label, x, _pair(layer.kernel_size),
                                _pair(layer.stride or layer.kernel_size), _pair(layer.padding))
            elif isinstance(layer, nn.AdaptiveAvgPool2d):
                size = layer.output_size
                h, w = (size, size) if isinstance(size, int) else size
                out = b.adaptive_avgpool(label, x, h, w)
            elif isinstance(layer, nn.Flatten):
                out = x
                flattened.add(x)
            else:
                raise ValueError(f"{label}: unsupported module {type(layer).__name__}")
            env[node.name] = out
        elif node.op == "call_function":
            if node.target in (operator.add, torch.add):
                env[node.name] = b.add(node.name, arg(node.args[0]), arg(node.args[1]))
            elif node.target is torch.flatten:
                env[node.name] = arg(node.args[0])
                flattened.add(env[node.name])
            elif node.target in (torch.relu, torch.nn.functional.relu):
                env[node.name] = b.relu(node.name, arg(node.args[0]))
            else:
                raise ValueError(f"{node.name}: unsupported function {node.target}")
        elif node.op == "output":
            out = arg(node.args[0])
            shape = b.shape(out)
            if len(shape) == 2:
                labels = b.input("labels", (shape[0],), "int64")
            else:
                labels = b.input("targets", shape)
            loss = b.cross_entropy("loss", out, labels)
            return b.finish(loss, {"output": out})
        else:
            raise ValueError(f"{node.name}: unsupported graph node {node.op}")
    raise ValueError("traced graph has no output")
