"""LU decomposition without pivoting, after Rodinia's LUD (seed 002 Sec 5, Table 1 LUD): one
block factorises one ``n`` x ``n`` matrix in shared memory, in place (Doolittle: the unit
lower factor below the diagonal, the upper factor on and above it). For each pivot ``k``, the
threads with index in ``k+1 .. n-1`` compute the column multipliers, a barrier, then every
thread updates the elements it owns (column ``tid % n``, every ``ntid / n``-th row) that lie in
the trailing submatrix, a barrier. The active region shrinks with ``k``: single-sided,
thread-dependent ``if``s as in Rodinia's lud_diagonal, lud_perimeter and lud_internal, the
mostly converged shape seed 002 Sec 6.2 reports for LUD.

The matrices are ``L U`` for random integer factors, so every division is exact and the int32
factorisation equals the real one (Rodinia factorises floats)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, barrier, ctaid, kernel, ntid, shared, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

NMAX = 16  # the largest matrix: the shared array's size is a constant


@kernel
def lud(a: Array, n: int):
    m = shared(NMAX * NMAX)
    base = ctaid() * n * n
    t = tid()
    c = t % n  # this thread's column; its rows are t // n, t // n + ntid() // n, ...
    rstep = ntid() // n
    r = t // n
    while r < n:
        m[r * n + c] = a[base + r * n + c]
        r += rstep
    barrier()
    for k in range(n - 1):
        if k < t < n:  # the multipliers of column k
            m[t * n + k] = m[t * n + k] // m[k * n + k]
        barrier()
        r = t // n
        while r < n:  # the trailing submatrix
            if r > k and c > k:
                m[r * n + c] -= m[r * n + k] * m[k * n + c]
            r += rstep
        barrier()
    r = t // n
    while r < n:
        a[base + r * n + c] = m[r * n + c]
        r += rstep


def factors(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random integer Doolittle factors: unit lower ``L``, upper ``U`` with a nonzero
    diagonal."""
    lower = np.tril(rng.integers(-3, 4, (n, n)), -1) + np.eye(n, dtype=np.int64)
    upper = np.triu(rng.integers(-5, 6, (n, n)), 1)
    upper += np.diag(rng.choice([-1, 1], n) * rng.integers(1, 5, n))
    return lower, upper


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    n = size
    if not 2 <= n <= NMAX:
        raise ValueError(f"lud: matrix size {n} not in 2..{NMAX}")
    block = n * min(n // 2, 256 // n)  # about two rows per thread
    grid = 2 if n < NMAX else 1536 // block  # NMAX, the eval size: 48 warps of 32
    matrices = [lower @ upper for lower, upper in (factors(n, rng) for _ in range(grid))]
    return Case({"a": int32_array(np.concatenate(matrices).ravel()), "n": n}, grid, block)


SPEC = SuiteKernel(
    "lud",
    lud,
    make,
    7,
    "Rodinia LU decomposition: shrinking active region",
    eval_size=NMAX,
    provenance=(
        "Seed 002 Table 1 LUD (Rodinia): the shrinking active region of LU factorisation with "
        "barriers; differs in one block factorising a small matrix unblocked in shared memory, "
        "where Rodinia runs its diagonal, perimeter and internal kernels over 16 x 16 tiles of "
        "floats."
    ),
)
