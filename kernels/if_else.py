"""The divergent if/else of seed 002 Fig 2: block A branches on the thread's parity into B or C,
which reconverge at D (the branch's immediate postdominator)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array, split_threads


@kernel
def ifElse(out: Array, data: Array):
    t = ctaid() * ntid() + tid()  # A
    x = data[t]
    if t % 2 == 0:  # noqa: SIM108 (the basic blocks of the figure)
        x = x * 3 + 1  # B
    else:
        x = x // 2 - 7  # C
    out[t] = x + t  # D


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    grid, block = split_threads(size)
    n = grid * block
    data = int32_array(rng.integers(-500, 500, n))
    return Case({"out": np.zeros(n, np.int32), "data": data}, grid=grid, block=block)


SPEC = SuiteKernel(
    "ifElse",
    ifElse,
    make,
    8,
    "seed 002 Fig 2: if/else reconverging at D",
    eval_size=1536,
    provenance=(
        "No paper benchmark: the control-flow shape of seed 002 Fig 2 (an if/else on parity "
        "reconverging at its immediate postdominator), with arithmetic of our own in each "
        "block."
    ),
)
