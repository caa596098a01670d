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


#: Modules of the kernels that model a seed's benchmark in the shape the paper describes, beyond
#: the suite (docs/compiler.md): in :func:`benchmarks` and the evaluation, not in the suite that
#: co-simulation sweeps.
SEED_MODULES = ("mand", "mc", "rend", "memc", "mum", "nqu")


def _specs(modules: tuple[str, ...]) -> dict[str, SuiteKernel]:
    specs = [importlib.import_module(f"reconverge.kernels.{m}").SPEC for m in modules]
    return {s.name: s for s in specs}


def suite() -> dict[str, SuiteKernel]:
    """Every suite kernel by name (the kernels of co-simulation)."""
    return _specs(MODULES)


def benchmarks() -> dict[str, SuiteKernel]:
    """The suite, then the seed benchmarks of :data:`SEED_MODULES`, by name (the kernels of
    the evaluation and of ``reconverge run``)."""
    return _specs(MODULES + SEED_MODULES)


__all__ = ["MODULES", "SEED_MODULES", "Case", "SuiteKernel", "benchmarks", "suite"]
