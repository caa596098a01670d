"""golden.graphs against brute-force definitions on random graphs (Hypothesis), plus the
virtual-exit cases (several exits, infinite loops) spelled out."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden import graphs

Graph = dict[int, list[int]]


@st.composite
def random_graphs(draw: st.DrawFn) -> Graph:
    n = draw(st.integers(1, 10))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=25))
    graph: Graph = {i: [] for i in range(n)}
    for a, b in edges:
        if b not in graph[a]:
            graph[a].append(b)
    return graph


def reach(graph: Graph, start: object, removed: object = None) -> set[object]:
    """Nodes reachable from ``start`` without entering ``removed``."""
    if start == removed:
        return set()
    seen, work = {start}, [start]
    while work:
        for s in graph[work.pop()]:
            if s != removed and s not in seen:
                seen.add(s)
                work.append(s)
    return seen


def brute_dominators(graph: Graph, entry: object) -> dict[object, set[object]]:
    nodes = reach(graph, entry)
    return {n: {d for d in nodes if d == n or n not in reach(graph, entry, d)} for n in nodes}


def immediate(doms: dict[object, set[object]], n: object) -> object:
    """The strict dominator of ``n`` dominated by all the others."""
    strict = doms[n] - {n}
    return next((d for d in strict if strict <= doms[d]), None)


EXIT = "exit"


def augmented(graph: Graph) -> Graph:
    """``graph`` with the virtual exit of golden.graphs, recomputed from its definition."""
    nodes = reach(graph, 0)
    out: Graph = {n: list(graph[n]) for n in nodes}
    order = graphs.reverse_postorder(0, graph.__getitem__)
    for n in nodes:
        if not graph[n]:
            out[n].append(EXIT)
    # A node with no path to an exit lies in (or leads to) a terminal component; connect the
    # first node (in reverse postorder) of every terminal component without an exit.
    for n in order:
        component = {m for m in reach(graph, n) if n in reach(graph, m)}
        terminal = all(s in component for m in component for s in graph[m])
        if terminal and not any(not graph[m] for m in component):
            first = min(component, key=order.index)
            if first == n:
                out[n].append(EXIT)
    out[EXIT] = []
    return out


@settings(max_examples=300, deadline=None)
@given(random_graphs())
def test_immediate_dominators_match_brute_force(graph: Graph) -> None:
    idom = graphs.immediate_dominators(0, graph.__getitem__)
    doms = brute_dominators(graph, 0)
    assert set(idom) == set(doms)
    for n in doms:
        assert idom[n] == immediate(doms, n)
        for d in doms:
            assert graphs.dominates(idom, d, n) == (d in doms[n])


@settings(max_examples=300, deadline=None)
@given(random_graphs())
def test_immediate_postdominators_match_brute_force(graph: Graph) -> None:
    ipdom = graphs.immediate_postdominators(0, graph.__getitem__)
    aug = augmented(graph)
    reversed_graph: Graph = {n: [] for n in aug}
    for n, ss in aug.items():
        for s in ss:
            reversed_graph[s].append(n)
    pdoms = brute_dominators(reversed_graph, EXIT)
    assert set(ipdom) == set(aug) - {EXIT}
    for n in ipdom:
        expected = immediate(pdoms, n)
        assert ipdom[n] == (None if expected == EXIT else expected)


@settings(max_examples=300, deadline=None)
@given(random_graphs())
def test_dominance_frontiers_match_definition(graph: Graph) -> None:
    frontier = graphs.dominance_frontiers(0, graph.__getitem__)
    doms = brute_dominators(graph, 0)
    preds = {n: [p for p in doms if n in graph[p]] for n in doms}
    for n in doms:
        expected = {
            y for y in doms if any(n in doms[p] for p in preds[y]) and not (n in doms[y] and n != y)
        }
        assert frontier[n] == expected


@settings(max_examples=300, deadline=None)
@given(random_graphs())
def test_natural_loops_match_back_edge_definition(graph: Graph) -> None:
    loops = graphs.natural_loops(0, graph.__getitem__)
    doms = brute_dominators(graph, 0)
    back = [(t, h) for t in doms for h in graph[t] if h in doms[t]]
    headers = {h for _, h in back}
    assert set(loops) == headers
    for h, loop in loops.items():
        body = {h}
        for t, hh in back:
            if hh == h:
                body |= {n for n in doms if t in reach(graph, n, h)} | {t}
        assert loop.body == body
        assert set(loop.latches) == {t for t, hh in back if hh == h}
        assert set(loop.exits) == {(a, b) for a in body for b in graph[a] if b not in body}
        enclosing = [o for o in headers if o != h and h in loops[o].body]
        if enclosing:
            assert loop.parent in enclosing
            assert all(loops[loop.parent].body <= loops[o].body for o in enclosing)
        else:
            assert loop.parent is None
    # Enclosing loops come first.
    order = list(loops)
    for h, loop in loops.items():
        if loop.parent is not None:
            assert order.index(loop.parent) < order.index(h)


@settings(max_examples=200, deadline=None)
@given(random_graphs())
def test_reverse_postorder_puts_nodes_before_successors_except_on_retreating_edges(
    graph: Graph,
) -> None:
    order = graphs.reverse_postorder(0, graph.__getitem__)
    assert order[0] == 0
    assert set(order) == reach(graph, 0)
    for n in order:
        for s in graph[n]:
            if order.index(s) <= order.index(n):  # a retreating edge: s is a DFS ancestor
                assert n in reach(graph, s)


def test_if_else_reconverges_at_join() -> None:
    # A -> B, C; B -> D; C -> D  (seed 002 Fig 2): D is the IPDOM of A's branch.
    g = {"A": ["B", "C"], "B": ["D"], "C": ["D"], "D": []}
    ipdom = graphs.immediate_postdominators("A", g.__getitem__)
    assert ipdom == {"A": "D", "B": "D", "C": "D", "D": None}


def test_loop_with_break_reconverges_after_the_loop() -> None:
    # seed 002 Fig 10: do { A; if (c1) { B; break; } C; } while (c2); D
    g = {"A": ["B", "C"], "B": ["D"], "C": ["A", "D"], "D": []}
    ipdom = graphs.immediate_postdominators("A", g.__getitem__)
    assert ipdom["A"] == "D" and ipdom["C"] == "D"
    loops = graphs.natural_loops("A", g.__getitem__)
    assert list(loops) == ["A"]
    assert loops["A"].body == {"A", "C"}
    assert set(loops["A"].exit_blocks) == {"B", "D"}


def test_several_exits_postdominated_by_virtual_exit() -> None:
    g = {0: [1, 2], 1: [], 2: []}
    assert graphs.immediate_postdominators(0, g.__getitem__) == {0: None, 1: None, 2: None}


def test_infinite_loop_connected_to_virtual_exit_at_its_header() -> None:
    # 0 -> 1 (exit) or 2; 2 <-> 3 forever: the loop's header 2 gets the virtual-exit edge.
    g = {0: [1, 2], 1: [], 2: [3], 3: [2]}
    ipdom = graphs.immediate_postdominators(0, g.__getitem__)
    assert ipdom == {0: None, 1: None, 2: None, 3: 2}


def test_deep_chain_does_not_recurse() -> None:
    n = 5000
    g = {i: [i + 1] for i in range(n)} | {n: []}
    assert graphs.immediate_dominators(0, g.__getitem__)[n] == n - 1
    assert graphs.immediate_postdominators(0, g.__getitem__)[0] == 1


@settings(max_examples=200, deadline=None)
@given(random_graphs(), st.data())
def test_live_sets_match_path_definition(graph: Graph, data: st.DataObject) -> None:
    """v is live into n iff some path from n reaches a node reading v with no node writing it
    in between (n itself: read before written)."""
    nodes = sorted(reach(graph, 0))
    subsets = st.sets(st.sampled_from(["x", "y"]))
    gen = {n: data.draw(subsets) for n in nodes}
    kill = {n: data.draw(subsets) for n in nodes}
    live_in, live_out = graphs.live_sets(0, graph.__getitem__, gen, kill)

    def live_into(n: int, v: str) -> bool:
        seen, work = set(), [n]
        while work:
            m = work.pop()
            if m in seen:
                continue
            seen.add(m)
            if v in gen[m]:
                return True
            if v not in kill[m]:
                work.extend(graph[m])
        return False

    for n in nodes:
        for v in ("x", "y"):
            assert (v in live_in[n]) == live_into(n, v)
            assert (v in live_out[n]) == any(live_into(s, v) for s in graph[n])
