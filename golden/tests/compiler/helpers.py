"""Shared helpers of the compiler tests."""

from __future__ import annotations

from reconverge.golden.compiler.analysis import FunctionAnalysis
from reconverge.golden.compiler.ir import Value


def version(fa: FunctionAnalysis, var: str, gsa: str | None = None) -> Value:
    """The single SSA version of source variable ``var`` (defined by a ``gsa`` function:
    ``mu``, ``gamma`` or ``eta``, or by an ordinary instruction when None)."""
    found = [
        ins.dest
        for _, ins in fa.function.instructions()
        if ins.dest is not None
        and ins.dest.var == var
        and (ins.gsa.kind if ins.gsa is not None else None) == gsa
    ]
    assert len(found) >= 1, f"no version of {var} defined by {gsa}"
    return found[0]


def versions(fa: FunctionAnalysis, var: str) -> list[Value]:
    return [v for v in fa.values() if v.var == var]
