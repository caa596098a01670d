"""The kernel suite: every kernel's reference (the oracle) against an independent
computation where one is easy, and every kernel compiled with every allocator and several
register budgets matching its reference on the golden model in three geometries (W = L
included), with the affine analysis checked dynamically."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from reconverge.golden.compiler import compile_kernel, regalloc, soundness
from reconverge.golden.functional import run
from reconverge.golden.geometry import Geometry
from reconverge.kernels import avg_square, bfs, hashtable, laplace3d, nqueens, suite

SUITE = suite()
GEOMETRIES = [Geometry(4, 4), Geometry(8, 4), Geometry(32, 8)]


def run_golden(spec, allocator: str, regs: int, geometry: Geometry, size=None, seed: int = 0):
    launch, case = spec.launch(allocator, regs, size, seed)
    result = run(launch.image, launch.config(case.grid, case.block, geometry=geometry))
    result.check()
    return launch.outputs(result)


def assert_matches(out: dict, ref: dict, what: str) -> None:
    for name, expected in ref.items():
        assert np.array_equal(out[name], expected), f"{what}: {name} differs"


def test_suite_lists_every_shape_of_the_issue() -> None:
    assert list(SUITE) == [
        "avgSquare", "sumTriangle", "initRows", "ifElse", "nested", "loopBreak", "condCall",
        "recursion", "bfs", "nqueens", "mandelbrot", "hashLookup", "laplace3d", "interpreter",
        "memcached", "mummer", "montecarlo", "lud", "raytrace",
        "aes", "libor", "pathfinder", "bitonicSort", "blackScholes", "neuralNet", "storeGPU",
    ]  # fmt: skip


# -- the oracle against independent computations -------------------------------------------


def test_avg_square_reference_is_the_column_average() -> None:
    case = avg_square.SPEC.case()
    c = case.args["c"]
    m = np.asarray(case.args["m"]).reshape(c, c)
    expected = [int(np.trunc(m[:, t].sum() / c)) for t in range(c)]
    assert avg_square.SPEC.reference()["v"][:c].tolist() == expected


def test_nqueens_reference_counts_solutions() -> None:
    # 10 solutions on 5x5, 2 with the first queen in each column; 6x6: 4 = 0+1+1+1+1+0.
    assert nqueens.SPEC.reference(5)["count"].tolist() == [2, 2, 2, 2, 2]
    assert nqueens.SPEC.reference(6)["count"].tolist() == [0, 1, 1, 1, 1, 0]


def test_bfs_reference_is_breadth_first_levels() -> None:
    case = bfs.SPEC.case()
    row, col, n = case.args["row"], case.args["col"], case.args["n"]
    levels = [bfs.UNSEEN] * n
    levels[0] = 0
    queue = collections.deque([0])
    while queue:
        v = queue.popleft()
        for w in col[row[v] : row[v + 1]]:
            if levels[w] == bfs.UNSEEN:
                levels[w] = levels[v] + 1
                queue.append(int(w))
    assert bfs.SPEC.reference()["level"].tolist() == levels


def test_hash_lookup_reference_finds_present_keys_only() -> None:
    case = hashtable.SPEC.case()
    table = dict(zip(case.args["keys"].tolist(), case.args["values"].tolist(), strict=True))
    expected = [table.get(k, -1) for k in case.args["queries"].tolist()]
    assert hashtable.SPEC.reference()["out"].tolist() == expected


def test_laplace_reference_is_the_seven_point_stencil() -> None:
    case = laplace3d.SPEC.case()
    nx, ny, nz = case.args["nx"], case.args["ny"], case.args["nz"]
    u = np.asarray(case.args["u"], np.int64).reshape(nz, ny, nx)
    out = u.copy()
    inner = (slice(1, -1),) * 3
    out[inner] = (
        u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:] + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
        + u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] - 6 * u[inner]
    )  # fmt: skip
    assert laplace3d.SPEC.reference()["out"].tolist() == out.ravel().tolist()


# -- compiled runs -----------------------------------------------------------------------------


@pytest.mark.parametrize("allocator", regalloc.ALLOCATORS)
@pytest.mark.parametrize("name", list(SUITE))
def test_kernel_matches_oracle_under_every_allocator(name: str, allocator: str) -> None:
    spec = SUITE[name]
    ref = spec.reference()
    for regs in (5, regalloc.MAX_REGS):
        for geometry in GEOMETRIES:
            out = run_golden(spec, allocator, regs, geometry)
            assert_matches(out, ref, f"{name} {allocator} --regs {regs} W={geometry.warp_size}")


@pytest.mark.parametrize("name", list(SUITE))
def test_affine_analysis_is_sound_on_the_suite(name: str) -> None:
    spec = SUITE[name]
    case = spec.case()
    launch = compile_kernel(spec.kernel, "affine", 6).bind(**case.args)
    for geometry in GEOMETRIES:
        config = launch.config(case.grid, case.block, geometry=geometry)
        result, violations, checked = soundness.check(launch, config)
        result.check()
        assert checked > 0
        assert not violations, "\n".join(map(str, violations[:5]))


@pytest.mark.parametrize("name", list(SUITE))
def test_kernel_matches_oracle_at_other_sizes_and_seeds(name: str) -> None:
    spec = SUITE[name]
    size = spec.default_size + 1
    out = run_golden(spec, "affine", 8, Geometry(8, 8), size=size, seed=3)
    assert_matches(out, spec.reference(size, seed=3), f"{name} size {size}")


@pytest.mark.slow
@pytest.mark.parametrize("allocator", regalloc.ALLOCATORS)
@pytest.mark.parametrize("name", list(SUITE))
def test_kernel_matches_oracle_for_every_budget(name: str, allocator: str) -> None:
    spec = SUITE[name]
    ref = spec.reference()
    for regs in range(5, regalloc.MAX_REGS + 1):
        out = run_golden(spec, allocator, regs, Geometry(8, 4))
        assert_matches(out, ref, f"{name} {allocator} --regs {regs}")
