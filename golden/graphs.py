"""Generic directed-graph utilities for control-flow graphs: reverse postorder, immediate
dominators and postdominators, dominance frontiers and natural loops.

A graph is given by an ``entry`` node and a successor function ``succ(node)`` returning the
node's successors (any iterable; order matters only for tie-breaking and is kept
deterministic). Nodes are any hashable values. Only the nodes reachable from ``entry`` take
part; every function ignores the rest.

Postdominance needs an end node. A graph may have several exits (nodes without successors) or
none at all on some paths (infinite loops); the functions below add a *virtual exit*: every exit
node gets an edge to it, and so does one node of every terminal strongly connected component
that contains no exit (an infinite loop: the component's first node in reverse postorder,
normally the loop header). A node whose immediate postdominator is the virtual exit maps to
``None``. On a control-flow graph the immediate postdominator of a branch is the IPDOM
reconvergence point of the SIMT literature (seed 002, Sec 2.2; seed 004, Sec 3.3): the earliest
point every thread that executes the branch is guaranteed to reach. ``None`` means that the only
such point is the end of the program.

The algorithms are the iterative ones of Cooper, Harvey and Kennedy ("A Simple, Fast Dominance
Algorithm", 2001) for dominators and dominance frontiers, and the classic back-edge definition
of natural loops (a back edge ``t -> h`` is one whose target dominates its source; the loop of
header ``h`` is ``h`` plus every node that reaches a back-edge source without passing ``h``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

N = TypeVar("N", bound=Hashable)

Successors = Callable[[N], Iterable[N]]

__all__ = [
    "Loop",
    "dominance_frontiers",
    "dominates",
    "dominator_tree",
    "immediate_dominators",
    "immediate_postdominators",
    "live_sets",
    "natural_loops",
    "postorder",
    "predecessors",
    "reachable",
    "reverse_postorder",
]


def postorder(entry: N, succ: Successors[N]) -> list[N]:
    """The nodes reachable from ``entry`` in depth-first postorder (successors visited in the
    order ``succ`` gives them; iterative, so deep graphs do not hit the recursion limit)."""
    seen = {entry}
    order: list[N] = []
    stack: list[tuple[N, list[N]]] = [(entry, list(succ(entry)))]
    while stack:
        node, pending = stack[-1]
        while pending:
            nxt = pending.pop(0)
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, list(succ(nxt))))
                break
        else:
            order.append(node)
            stack.pop()
    return order


def reverse_postorder(entry: N, succ: Successors[N]) -> list[N]:
    """The nodes reachable from ``entry`` in reverse postorder (``entry`` first; every node
    before its successors except along back edges)."""
    return postorder(entry, succ)[::-1]


def reachable(entry: N, succ: Successors[N]) -> set[N]:
    """The set of nodes reachable from ``entry`` (``entry`` included)."""
    return set(postorder(entry, succ))


def predecessors(entry: N, succ: Successors[N]) -> dict[N, list[N]]:
    """Predecessor lists of the nodes reachable from ``entry``, restricted to reachable nodes and
    ordered by the reverse postorder of the predecessor."""
    order = reverse_postorder(entry, succ)
    preds: dict[N, list[N]] = {n: [] for n in order}
    for n in order:
        for s in succ(n):
            if n not in preds[s]:
                preds[s].append(n)
    return preds


def _idoms(order: list[N], preds: Mapping[N, list[N]]) -> dict[N, N | None]:
    """Cooper-Harvey-Kennedy on nodes in reverse postorder (``order[0]`` is the root)."""
    index = {n: i for i, n in enumerate(order)}
    root = order[0]
    idom: dict[N, N] = {root: root}

    def intersect(a: N, b: N) -> N:
        while a != b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            done = [p for p in preds[n] if p in idom]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom.get(n) != new:
                idom[n] = new
                changed = True
    result: dict[N, N | None] = dict(idom)
    result[root] = None
    return result


def immediate_dominators(entry: N, succ: Successors[N]) -> dict[N, N | None]:
    """Immediate dominator of every node reachable from ``entry``; ``entry`` maps to ``None``.

    ``d`` dominates ``n`` when every path from ``entry`` to ``n`` passes through ``d``; the
    immediate dominator is the closest strict dominator."""
    order = reverse_postorder(entry, succ)
    return _idoms(order, predecessors(entry, succ))


class _VirtualExit:
    """The end node added for postdominance (never returned: it is reported as ``None``)."""

    def __repr__(self) -> str:
        return "<virtual exit>"


def _exit_edges(entry: N, succ: Successors[N]) -> tuple[list[N], dict[N, list[N]]]:
    """Nodes in reverse postorder and, for each, its successors, with the virtual-exit edges of
    the module docstring added (the exit itself is not a key)."""
    order = reverse_postorder(entry, succ)
    succs: dict[N, list[N]] = {n: list(dict.fromkeys(succ(n))) for n in order}
    rpo_index = {n: i for i, n in enumerate(order)}
    to_exit = {n for n in order if not succs[n]}
    # Terminal strongly connected components without an exit: infinite loops.
    for component in _sccs(order, succs):
        members = set(component)
        leaves = any(s not in members for n in component for s in succs[n])
        if not leaves and not members & to_exit:
            to_exit.add(min(component, key=rpo_index.__getitem__))
    return order, {n: [*succs[n], *([_EXIT] if n in to_exit else [])] for n in order}


_EXIT = _VirtualExit()


def _sccs(order: list[N], succs: Mapping[N, list[N]]) -> list[list[N]]:
    """Strongly connected components (Tarjan, iterative)."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    on_stack: set[N] = set()
    stack: list[N] = []
    result: list[list[N]] = []
    counter = 0
    for root in order:
        if root in index:
            continue
        work: list[tuple[N, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            nexts = succs[node]
            if i < len(nexts):
                work.append((node, i + 1))
                nxt = nexts[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                result.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return result


def immediate_postdominators(entry: N, succ: Successors[N]) -> dict[N, N | None]:
    """Immediate postdominator of every node reachable from ``entry``.

    ``p`` postdominates ``n`` when every path from ``n`` to the (virtual) exit passes through
    ``p``. A node maps to ``None`` when its immediate postdominator is the virtual exit (see
    the module docstring): the exits, and nodes from which several exits or infinite loops
    can be reached without a common node."""
    order, succs = _exit_edges(entry, succ)
    preds_rev: dict[object, list[object]] = {n: list(succs[n]) for n in order}
    preds_rev[_EXIT] = []
    # Reverse graph: successors of n in the reverse graph are n's predecessors.
    rsucc: dict[object, list[object]] = {n: [] for n in order}
    rsucc[_EXIT] = []
    for n in order:
        for s in succs[n]:
            rsucc[s].append(n)
    rorder = reverse_postorder(_EXIT, rsucc.__getitem__)
    ipdom = _idoms(rorder, preds_rev)
    return {n: (None if ipdom[n] is _EXIT else ipdom[n]) for n in order}  # type: ignore[misc]


def dominates(idom: Mapping[N, N | None], a: N, b: N) -> bool:
    """Whether ``a`` dominates ``b`` (reflexive) in the tree given by ``idom``; works for the
    postdominator tree of :func:`immediate_postdominators` too."""
    node: N | None = b
    while node is not None:
        if node == a:
            return True
        node = idom[node]
    return False


def dominator_tree(idom: Mapping[N, N | None]) -> dict[N, list[N]]:
    """Children of every node in the tree given by ``idom`` (in ``idom``'s key order)."""
    children: dict[N, list[N]] = {n: [] for n in idom}
    for n, parent in idom.items():
        if parent is not None:
            children[parent].append(n)
    return children


def dominance_frontiers(entry: N, succ: Successors[N]) -> dict[N, set[N]]:
    """Dominance frontier of every node reachable from ``entry``: the nodes ``y`` such that
    ``n`` dominates a predecessor of ``y`` but does not strictly dominate ``y`` (where SSA
    construction places phi functions, Cytron et al. 1991)."""
    idom = immediate_dominators(entry, succ)
    preds = predecessors(entry, succ)
    frontier: dict[N, set[N]] = {n: set() for n in idom}
    for n, ps in preds.items():
        for p in ps:
            runner: N | None = p
            while runner is not None and runner != idom[n]:
                frontier[runner].add(n)
                runner = idom[runner]
    return frontier


@dataclass(frozen=True)
class Loop:
    """A natural loop: its ``header``, the ``body`` (header included), the sources of its back
    edges (``latches``), its ``exits`` (edges ``(inside, outside)``) and the header of the
    innermost enclosing loop (``parent``, None for an outermost loop)."""

    header: Hashable
    body: frozenset[Hashable]
    latches: tuple[Hashable, ...]
    exits: tuple[tuple[Hashable, Hashable], ...]
    parent: Hashable | None

    @property
    def exit_blocks(self) -> tuple[Hashable, ...]:
        """Targets of the exit edges, without repetition, in edge order."""
        return tuple(dict.fromkeys(t for _, t in self.exits))

    @property
    def exiting_blocks(self) -> tuple[Hashable, ...]:
        """Sources of the exit edges (the loop's nodes with a successor outside)."""
        return tuple(dict.fromkeys(s for s, _ in self.exits))


def natural_loops(entry: N, succ: Successors[N]) -> dict[N, Loop]:
    """The natural loops of the graph, by header (back edges sharing a header form one loop),
    in reverse postorder of their headers, so an enclosing loop comes before the loops it
    contains. Irreducible cycles (no node dominating the cycle) are not natural loops and are
    not reported."""
    order = reverse_postorder(entry, succ)
    idom = _idoms(order, predecessors(entry, succ))
    preds = predecessors(entry, succ)
    latches: dict[N, list[N]] = {}
    for n in order:
        for s in dict.fromkeys(succ(n)):
            if dominates(idom, s, n):
                latches.setdefault(s, []).append(n)
    bodies: dict[N, set[N]] = {}
    for header, sources in latches.items():
        body = {header}
        work = [t for t in sources if t != header]
        while work:
            node = work.pop()
            if node not in body:
                body.add(node)
                work.extend(preds[node])
        bodies[header] = body
    headers = [n for n in order if n in bodies]

    def parent_of(h: N) -> N | None:
        enclosing = [o for o in headers if o != h and h in bodies[o]]
        return min(enclosing, key=lambda o: len(bodies[o])) if enclosing else None

    loops: dict[N, Loop] = {}
    for h in headers:
        body = bodies[h]
        members = [n for n in order if n in body]
        exits = tuple((n, s) for n in members for s in dict.fromkeys(succ(n)) if s not in body)
        loops[h] = Loop(h, frozenset(body), tuple(latches[h]), exits, parent_of(h))
    return loops


def live_sets(
    entry: N,
    succ: Successors[N],
    gen: Mapping[N, set[Hashable]],
    kill: Mapping[N, set[Hashable]],
) -> tuple[dict[N, set[Hashable]], dict[N, set[Hashable]]]:
    """Backward liveness: the least solution of ``in(n) = gen(n) | (out(n) - kill(n))`` and
    ``out(n) = union of in(s) over the successors s``, for the nodes reachable from ``entry``.
    ``gen(n)`` holds what ``n`` reads before writing it, ``kill(n)`` what ``n`` writes.
    Returns ``(in, out)``."""
    order = postorder(entry, succ)
    live_in: dict[N, set[Hashable]] = {n: set() for n in order}
    live_out: dict[N, set[Hashable]] = {n: set() for n in order}
    changed = True
    while changed:
        changed = False
        for n in order:
            out: set[Hashable] = set()
            for s in succ(n):
                out |= live_in[s]
            live_out[n] = out
            new = gen[n] | (out - kill[n])
            if new != live_in[n]:
                live_in[n] = new
                changed = True
    return live_in, live_out
