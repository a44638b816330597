"""The training-iteration graph shared by the host models.

A workload is one training iteration (forward, backward, optimizer step) as an ordered
list of ops over named tensors. The order is a valid execution order (every op comes after
the ops it depends on); the GPU model, the NDP offload planner and the tiering policies
all walk it in that order.
"""

from dataclasses import dataclass, field
from math import prod


__all__ = ["DTYPE_BYTES", "FLOAT_DTYPES", "HALF_DTYPES", "Tensor", "Op", "IterationGraph",
           "GraphError"]


DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "int64": 8, "int32": 4, "int8": 1, "bool": 1}
FLOAT_DTYPES = ("fp32", "fp16", "bf16")
# 16-bit floating point: tensor-core GEMMs, and 16-bit arithmetic energy
HALF_DTYPES = tuple(dtype for dtype in FLOAT_DTYPES if DTYPE_BYTES[dtype] == 2)

TENSOR_KINDS = ("weight", "activation", "gradient", "weight_gradient", "optimizer_state",
                "input", "workspace")

PHASES = ("forward", "backward", "optimizer")


class GraphError(ValueError):
    """A graph that is not a valid training iteration: an unknown dtype or tensor kind, a
    tensor id or op name used twice, an op naming a tensor that does not exist, or a
    dependency on an op that does not come before it."""


@dataclass(frozen=True)
class Tensor:
    """A tensor of the iteration. ``kind`` tells its lifetime class: weights and optimizer
    state persist across iterations, activations live from their forward producer to their
    last backward consumer, gradients within the backward pass."""

    id: str
    shape: tuple
    dtype: str
    kind: str
    # Bytes given directly (an imported trace knows sizes, not shapes); None: from the shape.
    size_bytes: int | None = None

    def __post_init__(self):
        if self.dtype not in DTYPE_BYTES:
            raise GraphError(f"tensor {self.id!r}: unknown dtype {self.dtype!r}")
        if self.kind not in TENSOR_KINDS:
            raise GraphError(f"tensor {self.id!r}: unknown kind {self.kind!r}")
        if any((not isinstance(d, int)) or d < 0 for d in self.shape):
            raise GraphError(f"tensor {self.id!r}: bad shape {self.shape!r}")
        if self.size_bytes is not None and (not isinstance(self.size_bytes, int)
                                            or self.size_bytes < 0):
            raise GraphError(f"tensor {self.id!r}: bad byte size {self.size_bytes!r}")

    @property
    def elements(self):
        """The element count."""
        return prod(self.shape)

    @property
    def bytes(self):
        """The size in bytes."""
        if self.size_bytes is not None:
            return self.size_bytes
        return self.elements * DTYPE_BYTES[self.dtype]

    @property
    def persistent(self):
        """Whether it lives across iterations (weights, optimizer state)."""
        return self.kind in ("weight", "optimizer_state")


@dataclass(frozen=True)
class Op:
    """One kernel of the iteration.

    kind:   conv, gemm, elementwise, normalization, reduction, softmax, embedding,
            pooling, loss, optimizer, ...
    flops:  floating-point operations (a multiply-add counts 2).
    inputs / outputs: tensor ids read / written.
    deps:   names of ops that must finish first (data dependencies at least).
    attrs:  free-form details (e.g. the elementwise function, the layer it belongs to).
    duration_s: a measured run time, which replaces the GPU model's estimate.
    fault_duration_s: its run time when every page of its inputs and outputs faults
        (demand paging), measured or modelled; None when unknown.
    output_fault_duration_s: its run time when only its outputs' pages fault.
    """

    name: str
    kind: str
    phase: str
    flops: int
    inputs: tuple
    outputs: tuple
    deps: tuple = ()
    attrs: dict = field(default_factory=dict, compare=False, hash=False)
    duration_s: float | None = None
    fault_duration_s: float | None = None
    output_fault_duration_s: float | None = None

    def __post_init__(self):
        if self.phase not in PHASES:
            raise GraphError(f"op {self.name!r}: unknown phase {self.phase!r}")
        if self.flops < 0:
            raise GraphError(f"op {self.name!r}: negative FLOPs")
        if self.duration_s is not None and not (self.duration_s >= 0
                                                and self.duration_s != float("inf")):
            raise GraphError(f"op {self.name!r}: bad duration {self.duration_s!r} s")
        for name in ("fault_duration_s", "output_fault_duration_s"):
            value = getattr(self, name)
            if value is not None and not (value >= 0 and value != float("inf")):
                raise GraphError(f"op {self.name!r}: bad {name} {value!r} s")


class IterationGraph:
    """One training iteration: ``tensors`` (:class:`Tensor`, by id) and ``ops`` (:class:`Op`)
    in a valid execution order, for ``batch`` samples in ``dtype``; ``meta`` holds what the
    builder knew (outputs, loss, optimizer, sequence length).

    The constructor checks the graph (:class:`GraphError` names the first problem). Build
    one with :class:`~matndp.host.zoo.builder.GraphBuilder`, take one from the zoo
    (:func:`~matndp.host.zoo.build_model`) or import a PyTorch model
    (:func:`~matndp.host.zoo.torch_import.import_module_graph`).
    """

    def __init__(self, name, tensors, ops, *, batch, dtype, meta=None):
        self.name = name
        self.batch = batch
        self.dtype = dtype
        self.meta = dict(meta or {})
        self.tensors = {}
        for tensor in tensors:
            if tensor.id in self.tensors:
                raise GraphError(f"{name}: tensor id {tensor.id!r} used twice")
            self.tensors[tensor.id] = tensor
        self.ops = list(ops)
        self._validate()

    def _validate(self):
        seen = set()
        for op in self.ops:
            if op.name in seen:
                raise GraphError(f"{self.name}: op name {op.name!r} used twice")
            for tensor_id in (*op.inputs, *op.outputs):
                if tensor_id not in self.tensors:
                    raise GraphError(f"{self.name}: op {op.name!r} names unknown tensor {tensor_id!r}")
            for dep in op.deps:
                if dep not in seen:
                    raise GraphError(f"{self.name}: op {op.name!r} depends on {dep!r}, "
                                     "which does not come before it")
            seen.add(op.name)

    def op(self, name):
        """The op named ``name`` (KeyError if none)."""
        for op in self.ops:
            if op.name == name:
                return op
        raise KeyError(f"{self.name}: no op named {name!r}")

    def tensor_bytes(self, tensor_id):
        """The size of tensor ``tensor_id`` in bytes."""
        return self.tensors[tensor_id].bytes

    def reads_sixteen_bit(self, op):
        """Whether any input of ``op`` is a 16-bit float (its arithmetic is 16-bit)."""
        return any(self.tensors[t].dtype in HALF_DTYPES for t in op.inputs)

    def op_bytes(self, op):
        """Bytes an op reads and writes, each tensor once (the DRAM traffic of an op with no
        reuse across kernels)."""
        return sum(self.tensors[t].bytes for t in op.inputs) + \
               sum(self.tensors[t].bytes for t in op.outputs)

    def parameters(self):
        """The number of trainable parameters (elements of the weight tensors)."""
        return sum(t.elements for t in self.tensors.values() if t.kind == "weight")
