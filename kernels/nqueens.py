"""N-Queens by backtracking: thread ``t`` counts the solutions with the first queen in column
``t``, with an explicit stack of columns in global memory (``work``). The search depth and
the number of steps differ per thread."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, device, kernel, tid
from reconverge.kernels.suite import Case, SuiteKernel


@device
def safe(work: Array, base, row, col):
    r = 0
    while r < row:
        c = work[base + r]
        if c == col or c - col == r - row or c - col == row - r:
            return 0
        r += 1
    return 1


@kernel
def nqueens(count: Array, work: Array, n: int):
    t = tid()
    base = t * n
    solutions = 0
    if t < n:
        work[base] = t
        row = 1
        col = 0
        while row > 0:
            if row == n:
                solutions += 1
                row -= 1
                col = work[base + row] + 1
                continue
            while col < n and not safe(work, base, row, col):
                col += 1
            if col < n:
                work[base + row] = col
                row += 1
                col = 0
            else:
                row -= 1
                col = work[base + row] + 1
        count[t] = solutions


def make(size: int, seed: int) -> Case:
    n = size
    return Case(
        {"count": np.zeros(n, np.int32), "work": np.zeros(n * n, np.int32), "n": n},
        grid=1, block=n,
    )  # fmt: skip


SPEC = SuiteKernel(
    "nqueens",
    nqueens,
    make,
    5,
    "N-Queens by backtracking: irregular search",
    eval_size=7,
    provenance=(
        "Seed 001 Table 5.2 NQU (N-Queen solver): irregular backtracking search with per-thread "
        "depth; differs from GPGPU-Sim's NQU (bitmask boards in shared memory, many partial "
        "boards per block) in giving each thread one first-queen column and an explicit column "
        "stack in global memory, so only N threads run (the benchmarks kernel nqu has the "
        "benchmark's shape)."
    ),
)
