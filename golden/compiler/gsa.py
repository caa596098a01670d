"""Gated SSA form (Ottenstein et al. 1990; Tu and Padua 1995; seed 004 Sec 3.3).

Every phi of the loop-closed SSA form becomes one of

* ``mu(o1, ..., on)`` at a loop header: the value on entry and the loop-carried values;
* ``gamma(P; o1, ..., on)`` at a join: ``P`` are the predicates of the branches whose paths
  meet there;
* ``eta(P; o1, ..., on)`` at a loop exit: ``P`` are the predicates of the branches that leave
  the loop (the value a thread leaves with depends on the iteration it leaves in), plus those
  of the branches whose paths meet there.

A block ``J`` is a join of a conditional branch ``B`` when paths from two different successors
of ``B`` reach ``J`` before reaching ``B``'s immediate postdominator (the reconvergence point,
which may itself be ``J``) and without passing through ``B`` again. For the structured code the
front end produces, this puts gamma functions exactly at the postdominator of the branch that
controls them (seed 004 Sec 3.3, "gamma and eta functions exist at the post-dominator of the
branch that controls them"), and handles break, continue and early return.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reconverge.golden import graphs
from reconverge.golden.compiler.ir import Function, Operand

MU, GAMMA, ETA = "mu", "gamma", "eta"
SYMBOLS = {MU: "μ", GAMMA: "γ", ETA: "η"}


@dataclass(frozen=True)
class Gate:
    """The GSA meaning of a phi: its kind, the branch blocks controlling it and their
    predicates (aligned), and the loop it belongs to (header label, for mu and eta)."""

    kind: str
    branches: tuple[str, ...]
    predicates: tuple[Operand, ...]
    loop: str | None = None

    def format(self, args: list[Operand]) -> str:
        operands = ", ".join(map(repr, args))
        if self.kind == MU:
            return f"μ({operands})"
        preds = ", ".join(map(repr, self.predicates)) or "-"
        return f"{SYMBOLS[self.kind]}({preds}; {operands})"


@dataclass(frozen=True)
class ControlFlow:
    """What the analyses and the back end need to know about a function's CFG."""

    ipdom: dict[str, str | None]
    loops: dict[str, graphs.Loop]
    joins: dict[str, frozenset[str]]  # conditional branch block -> its join blocks

    def reconvergence(self, label: str) -> str | None:
        """The reconvergence point of the branch ending block ``label`` (its IPDOM)."""
        return self.ipdom[label]


def _two_disjoint_paths(
    succ: Callable[[str], list[str]], sources: tuple[str, str], sink: str, avoid: set[str]
) -> bool:
    """Whether two paths, one from each source, reach ``sink`` sharing no node before it and
    passing no node of ``avoid``: a maximum flow of 2 with unit node capacities (each node
    split into an in- and an out-node; Edmonds-Karp, two augmentations at most)."""
    cap: dict[tuple[object, object], int] = {}
    adj: dict[object, set[object]] = {}

    def arc(u: object, v: object, c: int) -> None:
        cap[(u, v)] = cap.get((u, v), 0) + c
        cap.setdefault((v, u), 0)
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)

    source, target = ("source",), ("target",)
    for s in sources:
        arc(source, ("in", s), 1)
    seen: set[str] = set()
    work = list(sources)
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        if v == sink:
            arc(("in", v), target, 2)
            continue
        if v in avoid:
            continue
        arc(("in", v), ("out", v), 1)
        for w in succ(v):
            arc(("out", v), ("in", w), 1)
            work.append(w)
    flow = 0
    while flow < 2:
        parent: dict[object, object | None] = {source: None}
        queue = [source]
        while queue and target not in parent:
            u = queue.pop(0)
            for v in sorted(adj.get(u, ()), key=repr):
                if v not in parent and cap[(u, v)] > 0:
                    parent[v] = u
                    queue.append(v)
        if target not in parent:
            break
        v: object = target
        while parent[v] is not None:
            u = parent[v]
            cap[(u, v)] -= 1
            cap[(v, u)] += 1
            v = u
        flow += 1
    return flow == 2


def branch_joins(fn: Function, ipdom: dict[str, str | None]) -> dict[str, frozenset[str]]:
    """The join blocks of every conditional branch (module docstring): the blocks that two
    paths starting at different successors of the branch reach without sharing a node before
    it, without passing the branch again and without going past its reconvergence point."""
    joins: dict[str, frozenset[str]] = {}
    for label, block in fn.blocks.items():
        succs = block.succs()
        if block.term is None or block.term.op != "br" or len(succs) < 2:
            continue
        stop = ipdom[label]
        region: set[str] = set()
        work = list(succs)
        while work:
            node = work.pop()
            if node in region or node == label:
                continue
            region.add(node)
            if node != stop:
                work.extend(fn.succ(node))
        avoid = {label} | ({stop} if stop is not None else set())
        first, second = succs
        joins[label] = frozenset(
            j for j in region if _two_disjoint_paths(fn.succ, (first, second), j, avoid)
        )
    return joins


def control_flow(fn: Function) -> ControlFlow:
    ipdom = graphs.immediate_postdominators(fn.entry, fn.succ)
    loops = graphs.natural_loops(fn.entry, fn.succ)
    return ControlFlow(ipdom, loops, branch_joins(fn, ipdom))


def to_gsa(fn: Function) -> ControlFlow:
    """Classify every phi of ``fn`` (in SSA form) as mu, gamma or eta, storing the
    :class:`Gate` in its ``gsa`` field; returns the control-flow facts used."""
    cf = control_flow(fn)
    preds = graphs.predecessors(fn.entry, fn.succ)
    order = list(fn.blocks)
    for label, block in fn.blocks.items():
        phis = block.phis
        if not phis:
            continue
        if label in cf.loops:
            gate = Gate(MU, (), (), label)
        else:
            branches = [b for b, js in cf.joins.items() if label in js]
            exited = [
                h
                for h, loop in cf.loops.items()
                if label not in loop.body and any(p in loop.body for p in preds[label])
            ]
            for h in exited:
                branches += cf.loops[h].exiting_blocks  # type: ignore[arg-type]
            branches = sorted(set(branches), key=order.index)
            kind = ETA if exited else GAMMA
            predicates = tuple(fn.blocks[b].term.args[0] for b in branches)  # type: ignore[union-attr]
            gate = Gate(kind, tuple(branches), predicates, exited[-1] if exited else None)
        for phi in phis:
            phi.gsa = gate
    return cf
