"""A device function called under a divergent condition (seed 000 Listing 1). The function is
laid out after the kernel, at higher addresses than the call site: min(PC) alone would run
the code after the conditional block first; min(SP:PC) gives the deeper call priority."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, device, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array, split_threads


@device
def work(x):
    s = 0
    i = 0
    while i < x:
        s += i * i + x
        i += 1
    return s


@kernel
def condCall(out: Array, data: Array):
    t = ctaid() * ntid() + tid()
    v = data[t]
    if v % 3 == 0:  # divergent condition
        v = work(v % 16)
    out[t] = v + 1


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    grid, block = split_threads(size)
    n = grid * block
    data = int32_array(rng.integers(0, 100, n))
    return Case({"out": np.zeros(n, np.int32), "data": data}, grid=grid, block=block)


SPEC = SuiteKernel(
    "condCall",
    condCall,
    make,
    8,
    "seed 000 Listing 1: conditional call",
    eval_size=1536,
    provenance=(
        "No paper benchmark: the shape of seed 000 Listing 1 (a device function called under a "
        "divergent condition, laid out after its call site), with a small body of our own."
    ),
)
