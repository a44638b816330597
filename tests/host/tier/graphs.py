"""Small hand-made iteration graphs for the tiering tests (sizes in 4 KiB pages)."""

from matndp.host.graph import IterationGraph, Op, Tensor


PAGE = 4096


def pages(n, name, kind="activation"):
    """A tensor of exactly ``n`` pages of FP32."""
    return Tensor(name, (n * PAGE // 4,), "fp32", kind)


def split_graph():
    """X (10 pages) is made by op 0 and read again by op 9; ops 5 and 6 need Z (6 pages)
    while X waits. A chain of 1-page tensors s0..s8 links the ops.

    All-resident occupancy per slot (pages):
      slot 0: X s0 = 11;   1..4: X s_{k-1} s_k = 12;   5: X s4 Z = 17;   6: X Z s6 = 17;
      7: X s6 s7 = 12;     8: X s7 s8 = 12;            9: X s8 y = 12.
    """
    tensors = [pages(10, "X"), pages(6, "Z"), pages(1, "y")] + [pages(1, f"s{k}") for k in range(9)]
    ops = [Op("make_x", "gemm", "forward", 1, (), ("X", "s0"))]
    for k in range(1, 5):
        ops.append(Op(f"idle{k}", "elementwise", "forward", 1, (f"s{k - 1}",), (f"s{k}",)))
    ops.append(Op("big", "gemm", "forward", 1, ("s4",), ("Z",)))
    ops.append(Op("use_z", "gemm", "forward", 1, ("Z",), ("s6",)))
    ops.append(Op("idle7", "elementwise", "forward", 1, ("s6",), ("s7",)))
    ops.append(Op("idle8", "elementwise", "forward", 1, ("s7",), ("s8",)))
    ops.append(Op("use_x", "gemm", "backward", 1, ("X", "s8"), ("y",)))
    return IterationGraph("split", tensors, ops, batch=1, dtype="fp32")


SPLIT_OCCUPANCY = [11, 12, 12, 12, 12, 17, 17, 12, 12, 12]


def split_with_v_graph():
    """The split graph plus V (8 pages), written by op 2 and read by op 8: ops 5 and 6 now
    need 25 pages, and X and V are both idle there (X until op 9, V until op 8)."""
    graph = split_graph()
    ops = []
    for op in graph.ops:
        if op.name == "idle2":
            op = Op(op.name, op.kind, op.phase, op.flops, op.inputs, (*op.outputs, "V"))
        elif op.name == "idle8":
            op = Op(op.name, op.kind, op.phase, op.flops, (*op.inputs, "V"), op.outputs)
        ops.append(op)
    return IterationGraph("split+v", [*graph.tensors.values(), pages(8, "V")], ops, batch=1,
                          dtype="fp32")


SPLIT_WITH_V_OCCUPANCY = [11, 12, 20, 20, 20, 25, 25, 20, 20, 12]


def frozen_weight_graph():
    """The split graph with X replaced by a frozen weight W (10 pages): read by ops 0 and 9,
    written by none, so its flash copy (the checkpoint) stays valid all along."""
    graph = split_graph()
    tensors = [pages(10, "W", "weight") if t.id == "X" else t for t in graph.tensors.values()]
    ops = []
    for op in graph.ops:
        inputs = tuple("W" if t == "X" else t for t in op.inputs)
        outputs = tuple(t for t in op.outputs if t != "X")
        if op.name == "make_x":
            inputs = ("W",)
        ops.append(type(op)(op.name, op.kind, op.phase, op.flops, inputs, outputs))
    return IterationGraph("frozen", tensors, ops, batch=1, dtype="fp32")


def mlp_graph(layers=6, activation_pages=16, weight_pages=16):
    """Forward, backward and an optimizer step of a chain of ``layers`` GEMMs."""
    tensors = [pages(activation_pages, "x", "input")]
    for i in range(layers):
        tensors += [pages(weight_pages, f"w{i}", "weight"), pages(activation_pages, f"a{i}"),
                    pages(activation_pages, f"g{i}", "gradient"),
                    pages(weight_pages, f"dw{i}", "weight_gradient"),
                    pages(weight_pages, f"m{i}", "optimizer_state")]
    ops, previous = [], "x"
    for i in range(layers):
        ops.append(Op(f"fwd{i}", "gemm", "forward", 1, (previous, f"w{i}"), (f"a{i}",)))
        previous = f"a{i}"
    upstream = f"a{layers - 1}"
    for i in reversed(range(layers)):
        below = "x" if i == 0 else f"a{i - 1}"
        ops.append(Op(f"bwd{i}", "gemm", "backward", 1, (upstream, below, f"w{i}"),
                      (f"g{i}", f"dw{i}")))
        upstream = f"g{i}"
    for i in range(layers):
        ops.append(Op(f"opt{i}", "optimizer", "optimizer", 1, (f"w{i}", f"dw{i}", f"m{i}"),
                      (f"w{i}", f"m{i}")))
    return IterationGraph("mlp", tensors, ops, batch=4, dtype="fp32")


def return_graph():
    """A (120 pages) is made by op 0 and read again by op 4; op 1 makes B (100 pages),
    which op 2 reads; 1-page tensors chain the ops.

    All-resident occupancy: slot 0: A s0 = 121; 1: A s0 B = 221; 2: A B s2 = 201;
    3: A s2 s3 = 122; 4: A s3 y = 122. The largest working set is op 4's, 122 pages."""
    tensors = [pages(120, "A"), pages(100, "B")] + [pages(1, n) for n in ("s0", "s2", "s3", "y")]
    ops = [Op("make_a", "gemm", "forward", 1, (), ("A", "s0")),
           Op("make_b", "gemm", "forward", 1, ("s0",), ("B",)),
           Op("use_b", "gemm", "forward", 1, ("B",), ("s2",)),
           Op("idle", "elementwise", "forward", 1, ("s2",), ("s3",)),
           Op("use_a", "gemm", "backward", 1, ("A", "s3"), ("y",))]
    return IterationGraph("return", tensors, ops, batch=1, dtype="fp32")


def two_idle_graph():
    """A (40 pages, op 0) and C (40 pages, op 1) are idle while op 2 makes B (100 pages);
    op 3 reads A and C again. A was touched first, so LRU evicts it first."""
    tensors = [pages(40, "A"), pages(40, "C"), pages(100, "B")] + \
        [pages(1, n) for n in ("s0", "s1", "s2", "y")]
    ops = [Op("make_a", "gemm", "forward", 1, (), ("A", "s0")),
           Op("make_c", "gemm", "forward", 1, ("s0",), ("C", "s1")),
           Op("make_b", "gemm", "forward", 1, ("s1",), ("B", "s2")),
           Op("use_ac", "gemm", "backward", 1, ("A", "C", "s2"), ("y",))]
    return IterationGraph("two-idle", tensors, ops, batch=1, dtype="fp32")


def duplex_graph():
    """A weight W (60 pages) read by op 1 alone; A (60 pages) made by op 0 and read by op 2;
    1-page chain tensors. At HBM 100, from the second iteration on, op 1 faults 22 pages of
    W back while 22 of A must leave, and op 2 faults those 22 pages of A back while 22 of
    W leave: every fault batch also writes out."""
    tensors = [pages(60, "W", "weight"), pages(60, "A")] + [pages(1, n) for n in ("s0", "s1", "y")]
    ops = [Op("make_a", "gemm", "forward", 1, (), ("A", "s0")),
           Op("use_w", "gemm", "forward", 1, ("W", "s0"), ("s1",)),
           Op("use_a", "gemm", "backward", 1, ("A", "s1"), ("y",))]
    return IterationGraph("duplex", tensors, ops, batch=1, dtype="fp32")


def two_pairs_graph():
    """A, B, C and D (2 pages each) are made by op 0; op 2 makes Z (4 pages), which op 3
    reads; op 4 reads A and B, op 5 C and D. 1-page tensors chain the ops.

    All-resident occupancy: slot 0: 9; 1: 10; 2 and 3: 13; 4: 10; 5: 6. At op 2, A and B
    are next used 2 ops later, C and D 3 ops later."""
    tensors = [pages(2, name) for name in "ABCD"] + [pages(4, "Z")] + \
        [pages(1, name) for name in ("s0", "s1", "s3", "s4", "y")]
    ops = [Op("make", "gemm", "forward", 1, (), ("A", "B", "C", "D", "s0")),
           Op("idle", "elementwise", "forward", 1, ("s0",), ("s1",)),
           Op("make_z", "gemm", "forward", 1, ("s1",), ("Z",)),
           Op("use_z", "gemm", "forward", 1, ("Z",), ("s3",)),
           Op("use_ab", "gemm", "backward", 1, ("A", "B", "s3"), ("s4",)),
           Op("use_cd", "gemm", "backward", 1, ("C", "D", "s4"), ("y",))]
    return IterationGraph("two-pairs", tensors, ops, batch=1, dtype="fp32")


TWO_PAIRS_OCCUPANCY = [9, 10, 13, 13, 10, 6]
