"""The program of seed 004 Fig 3.10: thread ``t`` sets row ``t`` of the matrix ``m`` (``n``
columns) to ones. ``i = t * n`` is an affine function of ``t`` with an unknown uniform slope:
the degree-2 analysis proves it, the degree-1 analysis cannot."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, kernel, tid
from reconverge.kernels.suite import Case, SuiteKernel


@kernel
def initRows(m: Array, n: int):
    i = tid() * n
    k = i + n
    while i < k:
        m[i] = 1
        i = i + 1


def make(size: int, seed: int) -> Case:
    rows = size
    cols = 1 + seed % 4 + size // 2
    return Case({"m": np.zeros(rows * cols, np.int32), "n": cols}, grid=1, block=rows)


SPEC = SuiteKernel(
    "initRows",
    initRows,
    make,
    8,
    "seed 004 Fig 3.10: degree-2 affine rows",
    eval_size=512,
    provenance=(
        "No paper benchmark: seed 004's Fig 3.10 program, kept as written (row t of m set to "
        "ones), the case for the degree-2 affine analysis."
    ),
)
