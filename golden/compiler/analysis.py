"""The middle end of the pipeline: front end, SSA, GSA and every divergence analysis of a
kernel and its device functions, with the report ``reconverge analyze`` prints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reconverge.golden.compiler import affine, divergence, frontend, gsa, lang, ssa
from reconverge.golden.compiler.ir import Function, Instr, Module, Value

DEGREES = (1, 2)


@dataclass
class FunctionAnalysis:
    """Every analysis result of one function in GSA form."""

    function: Function
    cf: gsa.ControlFlow
    datadep: dict[Value, str]  # Fig 2.2 "Data Dep."
    simple: dict[Value, str]  # Sec 3.4
    affine: dict[int, dict[Value, affine.State]]  # Sec 3.5, by degree

    def definition(self, value: Value) -> Instr:
        return self.function.defs()[value][1]

    def branch_uniform(self, label: str, degree: int = 2) -> bool:
        """Whether the conditional branch ending block ``label`` is proven uniform."""
        cond = self.function.blocks[label].term.args[0]  # type: ignore[union-attr]
        if not isinstance(cond, Value):
            return True
        return self.affine[degree][cond].is_uniform

    def branches(self) -> list[str]:
        return [
            label
            for label, b in self.function.blocks.items()
            if b.term is not None and b.term.op == "br" and len(b.succs()) == 2
        ]

    def values(self) -> list[Value]:
        return self.function.values()


@dataclass
class ModuleAnalysis:
    module: Module
    functions: dict[str, FunctionAnalysis]

    @property
    def kernel(self) -> FunctionAnalysis:
        return self.functions[self.module.kernel.name]


def build_ir(k: lang.Kernel) -> Module:
    """The checked IR of ``k`` and its device functions, on source variables."""
    return frontend.build_module(k)


def analyse_function(fn: Function) -> FunctionAnalysis:
    """SSA, GSA and the analyses of one function (modified in place)."""
    ssa.to_ssa(fn)
    cf = gsa.to_gsa(fn)
    return FunctionAnalysis(
        fn,
        cf,
        divergence.analyse(fn, control=False),
        divergence.analyse(fn, control=True),
        {d: affine.analyse(fn, d) for d in DEGREES},
    )


def analyse_module(module: Module) -> ModuleAnalysis:
    return ModuleAnalysis(
        module, {name: analyse_function(f) for name, f in module.functions.items()}
    )


def analyse_kernel(k: lang.Kernel) -> ModuleAnalysis:
    return analyse_module(build_ir(k))


# ----------------------------------------------------------------------------------------------
# Report


def _definition_text(ins: Instr) -> str:
    return str(ins).split(" = ", 1)[1] if ins.dest is not None else str(ins)


def value_rows(fa: FunctionAnalysis, degree: int) -> list[dict[str, Any]]:
    """One row per value: the JSON form of ``reconverge analyze`` (docs/compiler.md)."""
    rows = []
    for block in fa.function.blocks.values():
        for ins in block.all():
            v = ins.dest
            if v is None:
                continue
            state = fa.affine[degree][v]
            rows.append(
                {
                    "value": v.name,
                    "variable": v.var,
                    "block": block.label,
                    "line": ins.pos.line if ins.pos else None,
                    "definition": _definition_text(ins),
                    "gsa": ins.gsa.kind if ins.gsa is not None else None,
                    "data_dep": fa.datadep[v],
                    "sec_3_4": fa.simple[v],
                    "sec_3_5": state.to_json(),
                    "sec_3_5_text": str(state),
                    "class": state.classify(),
                }
            )
    return rows


def branch_rows(fa: FunctionAnalysis, degree: int) -> list[dict[str, Any]]:
    rows = []
    for label in fa.branches():
        term = fa.function.blocks[label].term
        assert term is not None
        rows.append(
            {
                "block": label,
                "line": term.pos.line if term.pos else None,
                "predicate": repr(term.args[0]),
                "sec_3_4": "U" if not isinstance(term.args[0], Value) else fa.simple[term.args[0]],
                "uniform": fa.branch_uniform(label, degree),
                "reconverges_at": fa.cf.reconvergence(label),
            }
        )
    return rows


def report_json(ma: ModuleAnalysis, degree: int) -> dict[str, Any]:
    return {
        "kernel": ma.module.kernel.name,
        "degree": degree,
        "functions": [
            {
                "name": name,
                "kind": fa.function.kind,
                "values": value_rows(fa, degree),
                "branches": branch_rows(fa, degree),
            }
            for name, fa in ma.functions.items()
        ],
    }


def report_text(ma: ModuleAnalysis, degree: int) -> str:
    lines: list[str] = []
    for fa in ma.functions.values():
        lines.append(fa.function.signature())
        rows = value_rows(fa, degree)
        head = ("value", "definition", "line", "Data Dep.", "Sec 3.4", f"Sec 3.5 (degree {degree})")
        table = [
            (
                r["value"],
                r["definition"],
                str(r["line"] or ""),
                r["data_dep"],
                r["sec_3_4"],
                r["sec_3_5_text"],
            )
            for r in rows
        ]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *table, strict=True)]
        for row in (head, *table):
            lines.append(
                "  " + "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
            )
        for b in branch_rows(fa, degree):
            kind = "uniform" if b["uniform"] else "divergent"
            where = b["reconverges_at"] or "the end"
            lines.append(
                f"  branch {b['block']} (line {b['line']}) on {b['predicate']}: {kind}, "
                f"reconverges at {where}"
            )
        lines.append("")
    return "\n".join(lines).rstrip()
