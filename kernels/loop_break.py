"""The unstructured loop of seed 002 Fig 10: ``do { A; if (cond1) { B; break; } C; } while
(cond2); D`` — two exits, one of them a break, so the warp splits leaving through B and
through the loop condition meet early in B before D (opportunistic reconvergence, Fig 11)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, kernel, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array


@kernel
def loopBreak(out: Array, data: Array, limit: int):
    t = tid()
    x = data[t]
    n = 0
    while True:
        x = (x * 5 + 3) % 1009  # A
        n += 1
        if x % 7 == 0:
            x = x + 1000  # B
            break
        x = x + n  # C
        if n >= limit:
            break
    out[t] = x * 100 + n  # D


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    data = int32_array(rng.integers(0, 1009, size))
    return Case({"out": np.zeros(size, np.int32), "data": data, "limit": 12}, grid=1, block=size)


SPEC = SuiteKernel(
    "loopBreak",
    loopBreak,
    make,
    16,
    "seed 002 Fig 10: loop with break",
    eval_size=512,
    provenance=(
        "No paper benchmark: the unstructured loop of seed 002 Fig 10 (two exits, one a break) "
        "that Fig 11's opportunistic reconvergence targets, with data-dependent conditions of "
        "our own."
    ),
)
