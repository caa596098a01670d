"""The lud kernel (seed 002 Table 1 LUD): the oracle against Doolittle's formulas evaluated
row by row in exact rationals (the kernel updates the trailing submatrix instead), its factors
multiplying back to the input, and the compiled kernel on the functional model under every
allocator and on the cycle-level SM under every policy."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from reconverge.golden.compiler import regalloc
from reconverge.golden.functional import run
from reconverge.golden.geometry import Geometry
from reconverge.golden.sm.config import Policy, SMConfig, WarpFormation
from reconverge.golden.sm.core import run_sm
from reconverge.kernels import lud

SPEC = lud.SPEC
GEOMETRY = Geometry(warp_size=8, simd_width=4)
CONFIGS = [
    *(SMConfig(policy=p) for p in Policy),
    SMConfig(policy=Policy.PPC, hints=False),
    SMConfig(warp_formation=WarpFormation.DWF),
    SMConfig(warp_formation=WarpFormation.EN_DWF),
]


def doolittle(a: np.ndarray) -> np.ndarray:
    """``L - I + U`` of ``a = L U``: row i of U, then column i of L, from the rows and
    columns before them."""
    n = len(a)
    f = [[Fraction(0)] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            f[i][j] = Fraction(int(a[i, j])) - sum(f[i][p] * f[p][j] for p in range(i))
        for j in range(i + 1, n):
            f[j][i] = (int(a[j, i]) - sum(f[j][p] * f[p][i] for p in range(i))) / f[i][i]
    assert all(v.denominator == 1 for row in f for v in row)
    return np.array(f, dtype=np.int64)


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (9, 3), (SPEC.eval_size, 0)])
def test_oracle_factors_multiply_back(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    n = case.args["n"]
    matrices = case.args["a"].astype(np.int64).reshape(case.grid, n, n)
    factored = SPEC.reference(size, seed)["a"].astype(np.int64).reshape(case.grid, n, n)
    for a, f in zip(matrices, factored, strict=True):
        assert np.array_equal(f, doolittle(a))
        lower = np.tril(f, -1) + np.eye(n, dtype=np.int64)
        upper = np.triu(f)
        assert np.array_equal(lower @ upper, a)
        assert (np.diag(upper) != 0).all()


@pytest.mark.parametrize("allocator", regalloc.ALLOCATORS)
def test_functional_model_matches_oracle(allocator: str) -> None:
    reference = SPEC.reference()["a"]
    launch, case = SPEC.launch(allocator, 8)
    result = run(launch.image, launch.config(case.grid, case.block, geometry=GEOMETRY))
    result.check()
    assert np.array_equal(launch.read(result, "a"), reference), allocator


@pytest.mark.parametrize("hws", [False, True])
def test_every_policy_matches_oracle(hws: bool) -> None:
    reference = SPEC.reference()["a"]
    launches = {hints: SPEC.launch("affine", 8, hints=hints) for hints in (True, False)}
    for config in (SMConfig(**{**c.__dict__, "hws": hws}) for c in CONFIGS):
        launch, case = launches[config.explicit]
        result = run_sm(launch.image, launch.config(case.grid, case.block, geometry=GEOMETRY),
                        config)  # fmt: skip
        label = f"{config.policy.value} {config.warp_formation.value} hws={hws}"
        assert result.fault is None, f"{label}: {result.fault}"
        assert np.array_equal(launch.read(result, "a"), reference), label
