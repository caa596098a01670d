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


def run_case(spec, allocator: str, regs: int, warp_size: int = 8, size=None, seed: int = 0):
    """Compile suite kernel ``spec``, run it on golden and return (program, outputs, reference)."""
    import numpy as np  # noqa: F401

    from reconverge.golden.compiler import compile_kernel
    from reconverge.golden.functional import run
    from reconverge.golden.geometry import Geometry

    case = spec.case(size, seed)
    program = compile_kernel(spec.kernel, allocator, regs)
    launch = program.bind(**case.args)
    geometry = Geometry(warp_size=warp_size, simd_width=min(8, warp_size))
    result = run(launch.image, launch.config(case.grid, case.block, geometry=geometry))
    result.check()
    return program, launch.outputs(result), spec.reference(size, seed)
