"""The simple divergence analysis (seed 004 Sec 3.4, Fig 3.6) and the data-dependence-only
analysis of Fig 2.2's "Data Dep." column, both by graph reachability (the sparse
implementation of Sec 3.4).

The dependence graph has an edge ``u -> v`` when the instruction defining ``v`` uses ``u``, and
for a gamma or eta function also from each of its predicates (rule PDVD: control dependence made
data dependence by the GSA form). Divergence starts at the thread index and the lane id (TIDD),
at atomics (ATMD), at the results of calls and the parameters of device functions (the threads
that meet in a device function may come from different call sites); every value reachable from
one of them is divergent (D), every other value uniform (U). The "Data Dep." variant leaves out
the predicate edges: it is the unsound analysis the paper compares against, kept for
comparison only.
"""

from __future__ import annotations

from reconverge.golden.compiler.gsa import MU
from reconverge.golden.compiler.ir import Function, Instr, Value

UNIFORM, DIVERGENT = "U", "D"

#: CSRs that differ between the threads of a warp.
DIVERGENT_CSRS = frozenset({"tid", "laneid"})


def is_source(fn: Function, ins: Instr) -> bool:
    """Whether ``ins`` defines a value divergent by itself (TIDD, ATMD, calls, device
    parameters)."""
    if ins.op == "csr":
        return ins.attr in DIVERGENT_CSRS
    if ins.op == "param":
        return fn.kind != "kernel"
    return ins.op in ("atomic", "call")


def dependence_graph(fn: Function, control: bool) -> dict[Value, list[Value]]:
    """Edges ``u -> [v, ...]``; with ``control``, also from the predicates of gammas and etas."""
    edges: dict[Value, list[Value]] = {}
    for _, ins in fn.instructions():
        if ins.dest is None:
            continue
        sources = list(ins.uses())
        if control and ins.op == "phi" and ins.gsa is not None and ins.gsa.kind != MU:
            sources += [p for p in ins.gsa.predicates if isinstance(p, Value)]
        for u in sources:
            edges.setdefault(u, []).append(ins.dest)
    return edges


def analyse(fn: Function, control: bool = True) -> dict[Value, str]:
    """U or D for every value of ``fn`` (in GSA form): Sec 3.4 with ``control``, the
    "Data Dep." analysis without."""
    edges = dependence_graph(fn, control)
    divergent = {
        ins.dest for _, ins in fn.instructions() if ins.dest is not None and is_source(fn, ins)
    }
    work = list(divergent)
    while work:
        for v in edges.get(work.pop(), []):
            if v not in divergent:
                divergent.add(v)
                work.append(v)
    return {v: (DIVERGENT if v in divergent else UNIFORM) for v in fn.values()}
