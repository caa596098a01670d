"""The lud kernel (seed 002 Table 1 LUD): the oracle against Doolittle's formulas evaluated row by
row in exact rationals (the kernel updates the trailing submatrix instead), its factors
multiplying back to the input. (The compiled kernel under every allocator and every policy:
kernels/tests/test_suite.py and test_suite_sm.py, as for every suite kernel.)"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from reconverge.kernels import lud

SPEC = lud.SPEC


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
