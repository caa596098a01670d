"""reconverge.kernels: the workloads. The demo program (``divergent_demo.S``) and the kernel
suite: kernels of the kernel language, each with an input generator and, through the oracle,
its reference output (:class:`~reconverge.kernels.suite.SuiteKernel`)."""

from __future__ import annotations

import importlib

from reconverge.kernels.suite import Case, SuiteKernel

#: Modules of the suite, in the order of the issue: the seed kernels first.
MODULES = (
    "avg_square",
    "sum_triangle",
    "init_rows",
    "if_else",
    "nested",
    "loop_break",
    "cond_call",
    "recursion",
    "bfs",
    "nqueens",
    "mandelbrot",
    "hashtable",
    "laplace3d",
    "interpreter",
    "memcached",
    "mummer",
    "montecarlo",
    "lud",
    "raytrace",
    "aes",
    "libor",
    "pathfinder",
    "bitonic",
    "blackscholes",
    "neuralnet",
    "storegpu",
)


def suite() -> dict[str, SuiteKernel]:
    """Every suite kernel by name."""
    specs = [importlib.import_module(f"reconverge.kernels.{m}").SPEC for m in MODULES]
    return {s.name: s for s in specs}


__all__ = ["MODULES", "Case", "SuiteKernel", "suite"]
