"""avgSquare (seed 004 Fig 2.1, left): thread ``t < c`` averages column ``t`` of the c x c
matrix ``m``. Every thread loops ``c`` times, so the loop is uniform although its bounds are
functions of the thread index (Fig 2.2)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, kernel, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array


@kernel
def avgSquare(m: Array, v: Array, c: int):
    if tid() < c:
        d = 0
        s = 0
        N = tid() + c * c
        i = tid()
        while i < N:
            s += m[i]
            d += 1
            i += c
        v[tid()] = s // d


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    m = int32_array(rng.integers(-1000, 1000, size * size))
    block = size + 3  # some threads fail the tid < c test
    return Case({"m": m, "v": np.zeros(block, np.int32), "c": size}, grid=1, block=block)


SPEC = SuiteKernel(
    "avgSquare",
    avgSquare,
    make,
    6,
    "seed 004 Fig 2.1 avgSquare: uniform loop",
    eval_size=256,
    provenance=(
        "No paper benchmark: seed 004's worked example (Fig 2.1 left, the Fig 2.2 table), a "
        "uniform loop with thread-dependent bounds; the matrix is random instead of the thesis' "
        "symbolic one."
    ),
)
