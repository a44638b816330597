"""IterationGraph and its parts: every error of the constructors, named."""

import pytest

from matndp.host.graph import GraphError, IterationGraph, Op, Tensor


def _graph(tensors, ops):
    return IterationGraph("g", tensors, ops, batch=1, dtype="fp32")


X, Y = Tensor("x", (4,), "fp32", "input"), Tensor("y", (4,), "fp32", "activation")


@pytest.mark.parametrize("tensors, ops, message", [
    ([X, X], [], "g: tensor id 'x' used twice"),
    ([X, Y], [Op("a", "gemm", "forward", 1, ("x",), ("y",)),
              Op("a", "gemm", "forward", 1, ("y",), ("x",))], "g: op name 'a' used twice"),
    ([X], [Op("a", "gemm", "forward", 1, ("x",), ("z",))], "g: op 'a' names unknown tensor 'z'"),
    ([X, Y], [Op("a", "gemm", "forward", 1, ("x",), ("y",), deps=("b",)),
              Op("b", "gemm", "forward", 1, ("y",), ("x",))],
     "g: op 'a' depends on 'b', which does not come before it"),
])
def test_a_bad_graph_is_refused_naming_the_problem(tensors, ops, message):
    with pytest.raises(GraphError) as caught:
        _graph(tensors, ops)
    assert str(caught.value) == message


@pytest.mark.parametrize("make, message", [
    (lambda: Tensor("t", (1,), "fp64", "input"), "tensor 't': unknown dtype 'fp64'"),
    (lambda: Tensor("t", (1,), "fp32", "buffer"), "tensor 't': unknown kind 'buffer'"),
    (lambda: Op("o", "gemm", "sideways", 1, (), ()), "op 'o': unknown phase 'sideways'"),
    (lambda: Op("o", "gemm", "forward", -1, (), ()), "op 'o': negative FLOPs"),
])
def test_bad_tensors_and_ops_are_refused_by_name(make, message):
    with pytest.raises(GraphError, match=message):
        make()
