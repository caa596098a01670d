"""The nested branches of seed 002 Fig 6: A splits into B and C by parity; C splits again into
D and E, which reconverge at F; B and F reconverge at G."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, kernel, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array


@kernel
def nested(out: Array, data: Array):
    t = tid()  # A
    x = data[t]
    if t % 2 == 0:
        x = x + 100  # B
    else:
        x = x * 2  # C
        if t % 4 == 1:  # noqa: SIM108 (the basic blocks of the figure)
            x = x - 5  # D
        else:
            x = x ^ 0x55  # E
        x = x + t  # F
    out[t] = x * 7  # G


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    data = int32_array(rng.integers(-1000, 1000, size))
    return Case({"out": np.zeros(size, np.int32), "data": data}, grid=1, block=size)


SPEC = SuiteKernel(
    "nested",
    nested,
    make,
    16,
    "seed 002 Fig 6: nested divergence",
    eval_size=512,
    provenance=(
        "No paper benchmark: the control-flow shape of seed 002 Fig 6 (nested divergence A -> B "
        "| C -> D | E), with arithmetic of our own in each block."
    ),
)
