"""sumTriangle (seed 004 Fig 2.1, right): thread ``t < c`` sums the odd rows of column ``t``
of the upper triangle of ``m``; thread ``t`` loops ``t + 1`` times, so ``d`` is uniform inside
the loop and divergent after it (Fig 2.2)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, kernel, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array


@kernel
def sumTriangle(m: Array, v: Array, c: int):
    if tid() < c:
        d = 0
        s = 0
        L = (tid() + 1) * c
        i = tid()
        while i < L:
            if d % 2:
                s += m[i]
            d += 1
            i += c
        v[d - 1] = s


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    m = int32_array(rng.integers(-1000, 1000, size * size))
    block = size + 2
    return Case({"m": m, "v": np.zeros(size, np.int32), "c": size}, grid=1, block=block)


SPEC = SuiteKernel(
    "sumTriangle",
    sumTriangle,
    make,
    6,
    "seed 004 Fig 2.1 sumTriangle: divergent loop",
    eval_size=256,
    provenance=(
        "No paper benchmark: seed 004's worked example (Fig 2.1 right), a loop whose trip count "
        "is the thread index, so its counter is uniform inside and divergent after it."
    ),
)
