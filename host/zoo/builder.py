"""Build a training iteration from forward layers.

A model is written as its forward pass (``conv2d``, ``linear``, ``batchnorm`` ...); each
layer also states what its backward pass reads and writes. :meth:`GraphBuilder.finish`
then walks the forward ops in reverse to emit the backward ops (accumulating gradients of
tensors that have several consumers, as autograd does) and one optimizer op per parameter
tensor. Tensors are written once (static single assignment), except parameters and
optimizer state, which the optimizer updates in place; dependencies are derived from that:
read-after-write, and write-after-read for in-place updates.

FLOPs: a multiply-add counts 2. Convolution and GEMM counts are exact for the shapes;
element-wise, normalization and softmax counts are nominal per-element costs (their run
time is memory-bound, so the nominal count only matters for energy).
"""

from dataclasses import dataclass, field
from math import prod

from ..graph import IterationGraph, Op, Tensor
from ..registry import Registry


__all__ = ["Precision", "PRECISIONS", "OptimizerSpec", "OPTIMIZERS", "GraphBuilder", "conv_out"]


@dataclass(frozen=True)
class Precision:
    """``fp32``: everything in FP32. ``bf16`` / ``fp16``: mixed precision, i.e. activations,
    weights and gradients in 16 bits, FP32 master weights and optimizer moments, statistics
    and losses in FP32."""

    name: str

    @property
    def compute(self):
        return self.name

    @property
    def mixed(self):
        return self.name != "fp32"


# The training dtypes a model is built in.
PRECISIONS = Registry("dtype", (Precision("fp32"), Precision("bf16"), Precision("fp16")),
                      hint="the 16-bit ones mean mixed precision with FP32 master weights")


@dataclass(frozen=True)
class OptimizerSpec:
    """An element-wise optimizer: FLOPs per parameter and its state tensors (besides the
    FP32 master weights that mixed precision adds)."""

    name: str
    ndp_kernel: str
    flops_per_element: int
    states: tuple


# Adam(W): m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr (m^ / (sqrt(v^) + eps) + wd p)
# with bias corrections folded into scalars: 3 + 4 + 7 = 14, plus 2 for decoupled decay.
# SGD with momentum and weight decay: g += wd p; b = mu b + g; p -= lr b: 2 + 2 + 2.
OPTIMIZERS = Registry("optimizer", (
    OptimizerSpec("adamw", "adam", 16, ("exp_avg", "exp_avg_sq")),
    OptimizerSpec("sgd_momentum", "sgd_momentum", 6, ("momentum",)),
))


def conv_out(size, kernel, stride, padding):
    """The output size of a convolution or pooling window along one dimension."""
    out = (size + 2 * padding - kernel) // stride + 1
    if out < 1:
        raise ValueError(f"input size {size} too small for kernel {kernel}, stride {stride}, "
                         f"padding {padding}")
    return out


@dataclass
class _BackwardOp:
    suffix: str
    kind: str
    flops: int
    dy: tuple           # outputs of the forward op whose gradients this op reads
    saved: tuple        # forward tensors it reads
    dx: tuple           # inputs / parameters whose gradients it writes
    attrs: dict = field(default_factory=dict)


@dataclass
class _Layer:
    name: str
    backward: list
    alias: tuple = ()   # (output, inputs): gradient passes through unchanged (residual add)


class GraphBuilder:
    """Writes a training iteration from its forward pass.

    Declare the inputs (:meth:`input`), then call one method per layer (:meth:`conv2d`,
    :meth:`linear`, :meth:`batchnorm`, :meth:`relu`, ... :meth:`cross_entropy`); each
    returns the id of its output tensor and records what its backward pass reads and
    writes. :meth:`finish` adds the backward ops and one optimizer op per parameter tensor
    and returns the :class:`~matndp.host.graph.IterationGraph`.

    name:      the graph's name; tensor and op names are prefixed by the layer names given.
    batch:     samples per iteration (a positive integer).
    dtype:     ``fp32``, or ``bf16`` / ``fp16`` for mixed precision (:data:`PRECISIONS`).
    optimizer: ``adamw`` or ``sgd_momentum`` (:data:`OPTIMIZERS`).
    meta:      extra facts kept in the graph's ``meta``.
    """

    def __init__(self, name, *, batch, dtype, optimizer, meta=None):
        if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
            raise ValueError(f"batch must be a positive integer, not {batch!r}")
        self.optimizer = OPTIMIZERS.lookup(optimizer)
        self.name = name
        self.batch = batch
        self.precision = PRECISIONS.lookup(dtype)
        self.meta = dict(meta or {})
        self.tensors = {}
        self.ops = []
        self.parameters = []
        self._producer = {}
        self._readers = {}
        self._layers = []
        self._grad = {}

    # -- tensors ---------------------------------------------------------------------------
    def _tensor(self, tensor_id, shape, dtype, kind):
        if tensor_id in self.tensors:
            raise ValueError(f"{self.name}: tensor {tensor_id!r} defined twice")
        self.tensors[tensor_id] = Tensor(tensor_id, tuple(int(d) for d in shape), dtype, kind)
        return tensor_id

    def input(self, tensor_id, shape, dtype=None):
        """A model input (images, token ids, labels) of ``shape``; returns its id."""
        return self._tensor(tensor_id, shape, dtype or self.precision.compute, "input")

    def activation(self, tensor_id, shape, dtype=None):
        """An activation tensor a layer produces; returns its id."""
        return self._tensor(tensor_id, shape, dtype or self.precision.compute, "activation")

    def parameter(self, tensor_id, shape):
        """A trainable weight: the optimizer step updates it; returns its id."""
        self.parameters.append(tensor_id)
        return self._tensor(tensor_id, shape, self.precision.compute, "weight")

    def shape(self, tensor_id):
        """The shape of tensor ``tensor_id``."""
        return self.tensors[tensor_id].shape

    def elements(self, tensor_id):
        """The element count of tensor ``tensor_id``."""
        return self.tensors[tensor_id].elements

    # -- ops --------------------------------------------------------------------------------
    def _emit(self, name, kind, phase, flops, inputs, outputs, attrs=None):
        inputs, outputs = tuple(dict.fromkeys(inputs)), tuple(dict.fromkeys(outputs))
        deps = []
        for tensor_id in inputs:
            if tensor_id in self._producer:
                deps.append(self._producer[tensor_id])
        for tensor_id in outputs:   # in-place updates: after earlier writers and readers
            if tensor_id in self._producer:
                deps.append(self._producer[tensor_id])
            deps.extend(self._readers.get(tensor_id, ()))
        deps = tuple(d for d in dict.fromkeys(deps) if d != name)
        op = Op(name, kind, phase, int(flops), inputs, outputs, deps, dict(attrs or {}))
        self.ops.append(op)
        for tensor_id in inputs:
            self._readers.setdefault(tensor_id, []).append(name)
        for tensor_id in outputs:
            self._producer[tensor_id] = name
            self._readers[tensor_id] = []
        return op

    def forward(self, name, kind, flops, inputs, outputs, backward=(), alias=(), **attrs):
        """A forward op of any ``kind`` with its FLOPs, input and output tensor ids and the
        backward ops it implies (what the layer methods use; for a layer they lack)."""
        self._emit(name, kind, "forward", flops, inputs, outputs, attrs)
        self._layers.append(_Layer(name, list(backward), alias))

    # -- layers ------------------------------------------------------------------------------
    def conv2d(self, name, x, out_channels, kernel, stride=1, padding=0, bias=False):
        """A square 2-D convolution of the NCHW tensor ``x``; returns the output's id."""
        n, c, h, w = self.shape(x)
        ho, wo = conv_out(h, kernel, stride, padding), conv_out(w, kernel, stride, padding)
        weight = self.parameter(f"{name}.weight", (out_channels, c, kernel, kernel))
        params = [weight]
        if bias:
            params.append(self.parameter(f"{name}.bias", (out_channels,)))
        y = self.activation(f"{name}.out", (n, out_channels, ho, wo))
        macs = n * out_channels * ho * wo * c * kernel * kernel
        bias_flops = n * out_channels * ho * wo if bias else 0
        geometry = dict(kernel=kernel, stride=stride, padding=padding, macs=macs)
        self.forward(name, "conv", 2 * macs + bias_flops, (x, *params), (y,), backward=[
            _BackwardOp("dgrad", "conv", 2 * macs, (y,), (weight,), (x,), geometry),
            _BackwardOp("wgrad", "conv", 2 * macs + bias_flops, (y,), (x,), tuple(params),
                        geometry),
        ], **geometry)
        return y

    def linear(self, name, x, out_features, bias=True, weight=None, flatten=False):
        """``y = x W^T + b``. ``weight`` reuses an existing (tied) parameter; ``flatten``
        treats all but the first dimension of ``x`` as features (``torch.flatten(x, 1)``,
        a view)."""
        shape = self.shape(x)
        rows, in_features = (shape[0], prod(shape[1:])) if flatten else (prod(shape[:-1]), shape[-1])
        if weight is None:
            weight = self.parameter(f"{name}.weight", (out_features, in_features))
        elif self.shape(weight) != (out_features, in_features):
            raise ValueError(f"{name}: tied weight {weight!r} has shape {self.shape(weight)}, "
                             f"needs {(out_features, in_features)}")
        params = [weight]
        if bias:
            params.append(self.parameter(f"{name}.bias", (out_features,)))
        out_shape = (shape[0], out_features) if flatten else (*shape[:-1], out_features)
        y = self.activation(f"{name}.out", out_shape)
        macs = rows * in_features * out_features
        bias_flops = rows * out_features if bias else 0
        gemm = dict(m=rows, n=out_features, k=in_features, macs=macs)
        self.forward(name, "gemm", 2 * macs + bias_flops, (x, *params), (y,), backward=[
            _BackwardOp("dgrad", "gemm", 2 * macs, (y,), (weight,), (x,), gemm),
            _BackwardOp("wgrad", "gemm", 2 * macs + bias_flops, (y,), (x,), tuple(params), gemm),
        ], **gemm)
        return y

    def matmul(self, name, a, b, out_shape, batch, m, n, k):
        """Batched ``a @ b`` (attention scores and context); both operands get gradients."""
        y = self.activation(f"{name}.out", out_shape)
        macs = batch * m * n * k
        gemm = dict(batch=batch, m=m, n=n, k=k, macs=macs)
        self.forward(name, "gemm", 2 * macs, (a, b), (y,), backward=[
            _BackwardOp("dgrad_a", "gemm", 2 * macs, (y,), (b,), (a,), gemm),
            _BackwardOp("dgrad_b", "gemm", 2 * macs, (y,), (a,), (b,), gemm),
        ], **gemm)
        return y

    def batchnorm(self, name, x):
        """Batch normalization of the NCHW tensor ``x`` (training mode, FP32 statistics)."""
        n, c, h, w = self.shape(x)
        gamma = self.parameter(f"{name}.weight", (c,))
        beta = self.parameter(f"{name}.bias", (c,))
        y = self.activation(f"{name}.out", (n, c, h, w))
        mean = self.activation(f"{name}.save_mean", (c,), "fp32")
        invstd = self.activation(f"{name}.save_invstd", (c,), "fp32")
        elements = n * c * h * w
        # forward: sum, sum of squares (3/elem), normalize and scale-shift (4/elem)
        # backward: sum(dy), sum(dy*xhat) (4/elem), dx (6/elem)
        self.forward(name, "normalization", 7 * elements, (x, gamma, beta), (y, mean, invstd),
                     backward=[_BackwardOp("", "normalization", 10 * elements, (y,),
                                           (x, gamma, mean, invstd), (x, gamma, beta),
                                           {"ndp_kernel": "batchnorm_bwd"})],
                     ndp_kernel="batchnorm_fwd")
        return y

    def layernorm(self, name, x):
        """Layer normalization over the last dimension of ``x``."""
        shape = self.shape(x)
        rows, width = prod(shape[:-1]), shape[-1]
        gamma = self.parameter(f"{name}.weight", (width,))
        beta = self.parameter(f"{name}.bias", (width,))
        y = self.activation(f"{name}.out", shape)
        mean = self.activation(f"{name}.save_mean", (rows,), "fp32")
        rstd = self.activation(f"{name}.save_rstd", (rows,), "fp32")
        elements = rows * width
        self.forward(name, "normalization", 7 * elements, (x, gamma, beta), (y, mean, rstd),
                     backward=[_BackwardOp("", "normalization", 10 * elements, (y,),
                                           (x, gamma, mean, rstd), (x, gamma, beta),
                                           {"ndp_kernel": "layernorm_bwd"})],
                     ndp_kernel="layernorm_fwd")
        return y

    def _unary(self, name, x, forward_flops, backward_flops, kernel, saved, out_dtype=None):
        y = self.activation(f"{name}.out", self.shape(x), out_dtype)
        elements = self.elements(x)
        saved_ids = tuple(y if s == "y" else x for s in saved)
        self.forward(name, "elementwise", forward_flops * elements, (x,), (y,), backward=[
            _BackwardOp("", "elementwise", backward_flops * elements, (y,), saved_ids, (x,),
                        {"ndp_kernel": f"{kernel}_bwd"})], ndp_kernel=f"{kernel}_fwd")
        return y

    def relu(self, name, x):
        """Element-wise ReLU."""
        return self._unary(name, x, 1, 1, "relu", ("y",))

    def gelu(self, name, x):
        """Element-wise GELU."""
        # tanh approximation: about 8 FLOPs forward, 14 backward per element
        return self._unary(name, x, 8, 14, "gelu", ("x",))

    def tanh(self, name, x):
        """Element-wise tanh."""
        return self._unary(name, x, 4, 3, "tanh", ("y",))

    def scale(self, name, x):
        """Multiplication by a constant (attention's 1/sqrt(d))."""
        return self._unary(name, x, 1, 1, "scale", ())

    def dropout(self, name, x):
        """Dropout (training mode): the mask is kept for the backward pass."""
        y = self.activation(f"{name}.out", self.shape(x))
        mask = self.activation(f"{name}.mask", self.shape(x), "bool")
        elements = self.elements(x)
        # random number, compare, select, scale
        self.forward(name, "elementwise", 4 * elements, (x,), (y, mask), backward=[
            _BackwardOp("", "elementwise", 2 * elements, (y,), (mask,), (x,),
                        {"ndp_kernel": "dropout_bwd"})], ndp_kernel="dropout_fwd")
        return y

    def add(self, name, a, b):
        """Residual addition; its gradient passes to both operands without a kernel."""
        y = self.activation(f"{name}.out", self.shape(a))
        self.forward(name, "elementwise", self.elements(a), (a, b), (y,), alias=(y, (a, b)),
                     ndp_kernel="add")
        return y

    def add_constant(self, name, x, constant):
        """``x + c`` with a constant input tensor (attention mask); gradient passes to x."""
        y = self.activation(f"{name}.out", self.shape(x))
        self.forward(name, "elementwise", self.elements(x), (x, constant), (y,),
                     alias=(y, (x,)), ndp_kernel="add")
        return y

    def where(self, name, x, mask):
        """``where(mask, x, fill)`` (GPT-2's causal mask); backward masks the gradient."""
        y = self.activation(f"{name}.out", self.shape(x))
        elements = self.elements(x)
        self.forward(name, "elementwise", elements, (x, mask), (y,), backward=[
            _BackwardOp("", "elementwise", elements, (y,), (mask,), (x,),
                        {"ndp_kernel": "where_bwd"})], ndp_kernel="where_fwd")
        return y

    def softmax(self, name, x):
        """Softmax over the last dimension of ``x``."""
        y = self.activation(f"{name}.out", self.shape(x))
        elements = self.elements(x)
        # max, subtract, exp, sum, divide; backward: dot(dy, y), subtract, multiply
        self.forward(name, "softmax", 5 * elements, (x,), (y,), backward=[
            _BackwardOp("", "softmax", 3 * elements, (y,), (y,), (x,),
                        {"ndp_kernel": "softmax_bwd"})], ndp_kernel="softmax_fwd")
        return y

    def maxpool(self, name, x, kernel, stride, padding):
        """Square max-pooling of the NCHW tensor ``x``."""
        n, c, h, w = self.shape(x)
        ho, wo = conv_out(h, kernel, stride, padding), conv_out(w, kernel, stride, padding)
        y = self.activation(f"{name}.out", (n, c, ho, wo))
        indices = self.activation(f"{name}.indices", (n, c, ho, wo), "int64")
        outputs = n * c * ho * wo
        self.forward(name, "pooling", outputs * kernel * kernel, (x,), (y, indices), backward=[
            _BackwardOp("", "pooling", outputs, (y,), (indices,), (x,))],
            kernel=kernel, stride=stride, padding=padding)
        return y

    def adaptive_avgpool(self, name, x, out_h, out_w):
        """Adaptive average pooling of the NCHW tensor ``x`` to ``out_h`` x ``out_w``."""
        n, c, h, w = self.shape(x)
        y = self.activation(f"{name}.out", (n, c, out_h, out_w))
        elements = n * c * h * w
        self.forward(name, "pooling", elements, (x,), (y,), backward=[
            _BackwardOp("", "pooling", elements, (y,), (), (x,))])
        return y

    def embedding(self, name, indices, num_embeddings, dim, weight=None):
        """A lookup of rows of a ``num_embeddings`` x ``dim`` table (``weight`` reuses one)."""
        if weight is None:
            weight = self.parameter(f"{name}.weight", (num_embeddings, dim))
        y = self.activation(f"{name}.out", (*self.shape(indices), dim))
        elements = self.elements(y)
        # backward: zero the dense gradient, then scatter-add the rows
        self.forward(name, "embedding", 0, (indices, weight), (y,), backward=[
            _BackwardOp("", "embedding", elements, (y,), (indices,), (weight,))])
        return y

    def gather_rows(self, name, x, positions, rows):
        """Select ``rows`` positions of a (B, S, H) tensor (the masked-LM positions)."""
        shape = self.shape(x)
        y = self.activation(f"{name}.out", (rows, shape[-1]))
        self.forward(name, "gather", 0, (x, positions), (y,), backward=[
            _BackwardOp("", "gather", rows * shape[-1], (y,), (positions,), (x,))])
        return y

    def cross_entropy(self, name, logits, labels):
        """Cross-entropy of ``logits`` against integer ``labels``: the loss to pass to :meth:`finish`."""
        loss = self.activation(f"{name}.loss", (), "fp32")
        elements = self.elements(logits)
        # log-softmax (5/elem) and the pick; backward: softmax minus one-hot (3/elem)
        self.forward(name, "loss", 5 * elements, (logits, labels), (loss,), backward=[
            _BackwardOp("", "loss", 3 * elements, (loss,), (logits, labels), (logits,))])
        return loss

    # -- backward and optimizer --------------------------------------------------------------
    def _gradient_id(self, tensor_id):
        base = f"grad:{tensor_id}"
        candidate, index = base, 1
        while candidate in self.tensors:
            candidate, index = f"{base}#{index}", index + 1
        return candidate

    def _gradient_tensor(self, tensor_id):
        tensor = self.tensors[tensor_id]
        kind = "weight_gradient" if tensor.kind == "weight" else "gradient"
        return self._tensor(self._gradient_id(tensor_id), tensor.shape, tensor.dtype, kind)

    def _needs_gradient(self, tensor_id):
        return self.tensors[tensor_id].kind in ("activation", "weight")

    def _deliver(self, tensor_id, gradient_id, op_name):
        """Record a gradient contribution; a second one is summed as autograd does."""
        previous = self._grad.get(tensor_id)
        if previous is None:
            self._grad[tensor_id] = gradient_id
            return
        total = self._gradient_tensor(tensor_id)
        self._emit(f"{op_name}.accumulate:{tensor_id}", "elementwise", "backward",
                   self.elements(tensor_id), (previous, gradient_id), (total,),
                   {"ndp_kernel": "add", "accumulates": tensor_id})
        self._grad[tensor_id] = total

    def _backward(self, loss):
        seed = self._tensor(f"grad:{loss}", (), "fp32", "gradient")
        self._grad[loss] = seed
        for layer in reversed(self._layers):
            if layer.alias:
                output, inputs = layer.alias
                if output in self._grad:
                    for tensor_id in inputs:
                        if self._needs_gradient(tensor_id):
                            self._deliver(tensor_id, self._grad[output], layer.name)
                continue
            for spec in layer.backward:
                if any(y not in self._grad for y in spec.dy):
                    continue   # no loss depends on this output
                targets = [x for x in spec.dx if self._needs_gradient(x)]
                if not targets:
                    continue   # e.g. the data gradient of the first convolution
                name = f"{layer.name}.backward" + (f".{spec.suffix}" if spec.suffix else "")
                produced = {x: self._gradient_tensor(x) for x in targets}
                inputs = [self._grad[y] for y in spec.dy] + list(spec.saved)
                self._emit(name, spec.kind, "backward", spec.flops, inputs,
                           tuple(produced.values()), {**spec.attrs, "forward": layer.name})
                for x, gradient_id in produced.items():
                    self._deliver(x, gradient_id, name)

    def _optimizer_step(self):
        spec, mixed = self.optimizer, self.precision.mixed
        for weight in self.parameters:
            if weight not in self._grad:
                continue   # no gradient reaches it (as PyTorch, the optimizer skips it)
            shape = self.shape(weight)
            states = [self._tensor(f"{weight}.{state}", shape, "fp32", "optimizer_state")
                      for state in spec.states]
            master = [self._tensor(f"{weight}.master", shape, "fp32", "optimizer_state")] \
                if mixed else []
            updated = master or [weight]
            outputs = [*updated, *states] + ([weight] if mixed else [])
            self._emit(f"optimizer:{weight}", "optimizer", "optimizer",
                       spec.flops_per_element * self.elements(weight),
                       (*updated, self._grad[weight], *states), outputs,
                       {"ndp_kernel": spec.ndp_kernel, "parameter": weight})

    def finish(self, loss, outputs):
        """Emit backward and optimizer ops and return the graph. ``outputs`` names the
        model's output tensors (checked against the reference shapes)."""
        self._backward(loss)
        self._optimizer_step()
        meta = {**self.meta, "outputs": dict(outputs), "loss": loss,
                "optimizer": self.optimizer.name, "parameter_tensors": len(self.parameters)}
        return IterationGraph(self.name, self.tensors.values(), self.ops, batch=self.batch,
                              dtype=self.precision.name, meta=meta)
