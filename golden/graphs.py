"""Graph utilities over hashable nodes and a successor function: immediate postdominators
(Cooper, Harvey and Kennedy's iterative algorithm on the reverse graph, with a virtual exit
that every node without successors reaches)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

N = TypeVar("N", bound=Hashable)


def immediate_postdominators(
    nodes: Iterable[N], succ: Callable[[N], Iterable[N]]
) -> dict[N, N | None]:
    """The immediate postdominator of every node that reaches an exit (a node without
    successors); None when it is the virtual exit. Nodes that reach no exit are left out."""
    nodes = list(nodes)
    exit_ = object()
    preds: dict[object, list[object]] = {n: [] for n in nodes}
    preds[exit_] = []
    rsucc: dict[object, list[object]] = {exit_: []}  # successors in the reverse graph
    for n in nodes:
        out = list(succ(n))
        for s in out or [exit_]:
            rsucc.setdefault(s, []).append(n)
            preds[n].append(s)
    # Reverse postorder of the reverse graph from the virtual exit.
    order: list[object] = []
    seen = {exit_}
    stack = [(exit_, iter(rsucc.get(exit_, [])))]
    while stack:
        node, it = stack[-1]
        child = next(it, None)
        if child is None:
            order.append(node)
            stack.pop()
        elif child not in seen:
            seen.add(child)
            stack.append((child, iter(rsucc.get(child, []))))
    order.reverse()
    index = {n: i for i, n in enumerate(order)}
    idom: dict[object, object] = {exit_: exit_}

    def intersect(a: object, b: object) -> object:
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
    return {n: (None if idom[n] is exit_ else idom[n]) for n in nodes if n in idom}  # type: ignore[misc]
