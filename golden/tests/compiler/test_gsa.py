"""GSA gating: join blocks of a branch by disjoint paths (against brute force), and the gates
the front end's shapes get."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.compiler import gsa
from reconverge.golden.compiler.analysis import analyse_kernel
from reconverge.kernels import loop_break, nested


def simple_paths(graph: dict[int, list[int]], start: int, end: int, avoid: set[int]):
    """Every simple path from start to end not passing a node of avoid (end excepted)."""
    out = []

    def walk(node: int, path: list[int]) -> None:
        if node == end:
            out.append(path)
            return
        if node in avoid:
            return
        for nxt in graph[node]:
            if nxt not in path:
                walk(nxt, [*path, nxt])

    walk(start, [start])
    return out


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_two_disjoint_paths_matches_brute_force(data: st.DataObject) -> None:
    n = data.draw(st.integers(3, 8))
    edges = data.draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=16)
    )
    graph = {i: sorted({b for a, b in edges if a == i}) for i in range(n)}
    s1, s2 = data.draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
    sink = data.draw(st.integers(0, n - 1))
    avoid = set(data.draw(st.sets(st.integers(0, n - 1), max_size=2))) - {s1, s2, sink}
    expected = any(
        set(p[:-1]).isdisjoint(q[:-1])
        for p in simple_paths(graph, s1, sink, avoid)
        for q in simple_paths(graph, s2, sink, avoid)
    )
    assert gsa._two_disjoint_paths(graph.__getitem__, (s1, s2), sink, avoid) == expected


def gates(k) -> dict[str, tuple[str, tuple[str, ...]]]:
    fa = analyse_kernel(k).kernel
    return {
        ins.dest.name: (ins.gsa.kind, tuple(map(repr, ins.gsa.predicates)))
        for _, ins in fa.function.instructions()
        if ins.op == "phi"
    }


def test_nested_branches_gate_each_join_by_its_own_branch() -> None:
    """seed 002 Fig 6: F joins D and E (inner branch only), G joins B and F (outer only)."""
    g = gates(nested.nested)
    inner = [v for v, (kind, preds) in g.items() if kind == gsa.GAMMA and len(preds) == 1]
    assert len(inner) == 2 and len({g[v][1] for v in inner}) == 2


def test_loop_with_break_exits_through_eta_gated_by_both_exits() -> None:
    """seed 002 Fig 10: the value leaving the loop depends on the break and on the loop
    condition."""
    g = gates(loop_break.loopBreak)
    etas = {v: preds for v, (kind, preds) in g.items() if kind == gsa.ETA}
    assert etas and all(len(preds) >= 2 for preds in etas.values())
    assert any(kind == gsa.MU for kind, _ in g.values())
