"""The benchmark registry (docs/compiler.md): the suite unchanged and first, every kernel with its
provenance (which seed benchmark it models, or that it models none)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from reconverge.golden.compiler import regalloc
from reconverge.golden.functional import run
from reconverge.golden.geometry import Geometry
from reconverge.kernels import MODULES, SEED_MODULES, SuiteKernel, benchmarks, suite
from reconverge.kernels.avg_square import avgSquare
from reconverge.kernels.avg_square import make as avg_square_case


def test_the_suite_is_unchanged_and_benchmarks_extend_it() -> None:
    """The suite: 26 kernels in the order of ``MODULES`` (their names: test_suite.py); the
    benchmarks: the same objects first, then one per module of ``SEED_MODULES``."""
    suite_names = list(suite())
    assert len(MODULES) == len(suite_names) == 26
    modules = [spec.kernel.fn.__module__.rsplit(".", 1)[1] for spec in suite().values()]
    assert modules == list(MODULES)
    names = list(benchmarks())
    assert names[: len(suite_names)] == suite_names
    assert len(names) == len(suite_names) + len(SEED_MODULES)  # no name taken twice
    assert all(benchmarks()[n] is suite()[n] for n in suite_names)
    seeds = [benchmarks()[n].kernel.fn.__module__.rsplit(".", 1)[1] for n in names[26:]]
    assert seeds == list(SEED_MODULES)


@pytest.mark.parametrize("name", list(benchmarks()))
def test_every_benchmark_says_where_it_comes_from(name: str) -> None:
    provenance = benchmarks()[name].provenance
    assert len(provenance) > 40, provenance
    # a seed and a benchmark or figure of it, or the honest "no paper benchmark"
    assert re.search(r"[Ss]eed 00[0-4]", provenance), provenance


@pytest.mark.parametrize("name", [n for n in benchmarks() if n not in suite()])
def test_seed_benchmarks_fill_full_warps_at_eval_size(name: str) -> None:
    spec = benchmarks()[name]
    case = spec.case(spec.eval_size)
    assert case.block % 32 == 0 and case.grid * case.block >= 1536, (case.grid, case.block)


@pytest.mark.parametrize("name", [n for n in benchmarks() if n not in suite()])
def test_seed_benchmarks_compile_under_every_allocator(name: str) -> None:
    """Spilling at 5 registers under each allocator, and the widest budget (the register
    budgets of the evaluation's seed 004 rows), on the functional model."""
    spec = benchmarks()[name]
    reference = spec.reference()
    budgets = [(a, 5) for a in regalloc.ALLOCATORS] + [("affine", regalloc.MAX_REGS)]
    for allocator, regs in budgets:
        launch, case = spec.launch(allocator, regs)
        result = run(launch.image, launch.config(case.grid, case.block, geometry=Geometry(8, 4)))
        result.check()
        outputs = launch.outputs(result)
        for array, expected in reference.items():
            assert np.array_equal(outputs[array], expected), f"{allocator} {regs}: {array}"


def test_a_kernel_without_provenance_is_refused() -> None:
    with pytest.raises(ValueError, match="which benchmark"):
        SuiteKernel("x", avgSquare, avg_square_case, 4, "shape", provenance=" ")
