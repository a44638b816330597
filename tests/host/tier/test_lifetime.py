import pytest

from matndp.host.tier.lifetime import Gap, Lifetimes

from matndp.host.graph import IterationGraph, Op

from .graphs import PAGE, SPLIT_OCCUPANCY, frozen_weight_graph, mlp_graph, pages, split_graph


def test_split_graph_occupancy_footprint_and_gaps():
    lifetimes = Lifetimes(split_graph(), 4096)
    assert list(lifetimes.base_occupancy) == SPLIT_OCCUPANCY
    assert lifetimes.footprint_pages == 17
    # Only X waits between two uses; the chain tensors are used by adjacent ops.
    assert lifetimes.gaps == [Gap(lifetimes.index["X"], 0, 9)]
    assert lifetimes.largest_working_set() == (12, "use_x")     # X + s8 + y


def test_one_idle_slot_makes_a_gap_and_none_does_not():
    # T is written by op 0, skipped by op 1 and read by op 2; the chain tensors are used by
    # adjacent ops only
    tensors = [pages(2, "T"), pages(1, "c0"), pages(1, "c1"), pages(1, "c2")]
    ops = [Op("make", "gemm", "forward", 1, (), ("T", "c0")),
           Op("skip", "gemm", "forward", 1, ("c0",), ("c1",)),
           Op("use", "gemm", "forward", 1, ("T", "c1"), ("c2",))]
    lifetimes = Lifetimes(IterationGraph("one-idle", tensors, ops, batch=1, dtype="fp32"), PAGE)
    assert lifetimes.gaps == [Gap(lifetimes.index["T"], 0, 2)]


def test_pages_round_up():
    lifetimes = Lifetimes(split_graph(), 3000)
    assert lifetimes.pages[lifetimes.index["X"]] == 14      # 40960 B / 3000 B


def test_persistent_tensors_live_always_and_wrap_into_the_next_iteration():
    graph = mlp_graph(layers=2, activation_pages=1, weight_pages=2)
    lifetimes = Lifetimes(graph, 4096)
    w0 = lifetimes.index["w0"]
    # ops: fwd0 fwd1 bwd1 bwd0 opt0 opt1; w0 is used by fwd0 (0), bwd0 (3), opt0 (4).
    assert lifetimes.uses[w0] == [0, 3, 4]
    assert Gap(w0, 0, 3) in lifetimes.gaps and Gap(w0, 4, 6) in lifetimes.gaps
    # Weights, momentum: 4 × 2 pages always; x, a0, a1, g1, g0 and dw1, dw0 come and go.
    assert lifetimes.base_occupancy[0] == 8 + 1 + 1            # + x, a0
    # x 0..3, a0 0..2, a1 1..2, g1 2..3, dw1 (2) 2..5, g0 3, dw0 (2) 3..4
    assert list(lifetimes.base_occupancy) == [10, 11, 14, 15, 12, 10]
    assert lifetimes.footprint_pages == 15


def test_a_graph_without_ops_is_refused():
    from matndp.host.graph import IterationGraph
    with pytest.raises(ValueError, match="no ops"):
        Lifetimes(IterationGraph("empty", [], [], batch=1, dtype="fp32"), 4096)


def test_gap_arrays_give_each_gaps_idle_slots_size_and_whether_it_was_written():
    lifetimes = Lifetimes(split_graph(), PAGE)
    arrays = lifetimes.gap_arrays()
    assert [list(a) for a in arrays] == [[1], [9], [10], [True]]     # X: slots 1..8 idle
    frozen = Lifetimes(frozen_weight_graph(), PAGE).gap_arrays()
    assert list(frozen.dirty) == [False]                             # W is never written


def test_a_graph_without_gaps_has_empty_gap_arrays_of_the_right_kinds():
    tensors = [pages(2, "a"), pages(1, "b"), pages(3, "unused")]
    ops = [Op("make", "gemm", "forward", 1, (), ("a",)),
           Op("use", "gemm", "forward", 1, ("a",), ("b", "b"))]
    lifetimes = Lifetimes(IterationGraph("tight", tensors, ops, batch=1, dtype="fp32"), PAGE)
    arrays = lifetimes.gap_arrays()
    assert [len(a) for a in arrays] == [0, 0, 0, 0]
    assert [a.dtype.kind for a in arrays] == ["i", "i", "i", "b"]
    # Births, deaths, reads and writes per op; the unused tensor is nowhere.
    a, b, unused = (lifetimes.index[name] for name in ("a", "b", "unused"))
    assert lifetimes.born_at == [[a], [b]] and lifetimes.dies_after == [[], [a, b]]
    assert lifetimes.working_set == [(a,), (a, b)] and lifetimes.writes == [(a,), (b,)]
    assert list(lifetimes.used) == [True, True, False]
    assert list(lifetimes.written_ever) == [True, True, False]
    assert list(lifetimes.working_set_pages) == [2, 3] and list(lifetimes.base_occupancy) == [2, 3]
    assert lifetimes.footprint_bytes == 3 * PAGE
    assert lifetimes.largest_working_set() == (3, "use")


def test_the_empty_iteration_is_refused_by_name():
    with pytest.raises(ValueError, match="^empty: the iteration has no ops$"):
        Lifetimes(IterationGraph("empty", [], [], batch=1, dtype="fp32"), PAGE)
