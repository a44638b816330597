"""Size and cost of one training iteration, as ``matndp model summary`` reports it."""

from collections import Counter


__all__ = ["summarize", "footprint_bytes"]


def _bytes_of_kind(graph, *kinds):
    return sum(t.bytes for t in graph.tensors.values() if t.kind in kinds)


def footprint_bytes(graph):
    """A lower bound of the peak device memory of the iteration without recomputation:
    persistent state, weight gradients and every forward activation (all are alive when
    the backward pass starts). Workspace and allocator fragmentation are not counted."""
    return _bytes_of_kind(graph, "weight", "optimizer_state", "weight_gradient",
                          "activation", "input")


def summarize(graph):
    """Parameters, FLOPs (total, by phase, by op kind), tensor bytes by kind, the footprint
    and op counts of ``graph``, as a JSON-able dict."""
    kinds = Counter(op.kind for op in graph.ops)
    flops_by_kind = Counter()
    flops_by_phase = Counter()
    for op in graph.ops:
        flops_by_kind[op.kind] += op.flops
        flops_by_phase[op.phase] += op.flops
    outputs = {name: list(graph.tensors[tensor_id].shape)
               for name, tensor_id in graph.meta.get("outputs", {}).items()}
    return {
        "model": graph.name,
        "batch": graph.batch,
        "dtype": graph.dtype,
        "seq_len": graph.meta.get("seq_len"),
        "optimizer": graph.meta.get("optimizer"),
        "parameters": graph.parameters(),
        "flops_per_iteration": sum(op.flops for op in graph.ops),
        "flops_by_phase": dict(flops_by_phase),
        "flops_by_kind": dict(flops_by_kind),
        "weight_bytes": _bytes_of_kind(graph, "weight"),
        "weight_gradient_bytes": _bytes_of_kind(graph, "weight_gradient"),
        "optimizer_state_bytes": _bytes_of_kind(graph, "optimizer_state"),
        "activation_bytes": _bytes_of_kind(graph, "activation"),
        "footprint_bytes": footprint_bytes(graph),
        "ops": len(graph.ops),
        "ops_by_kind": dict(sorted(kinds.items())),
        "outputs": outputs,
    }
